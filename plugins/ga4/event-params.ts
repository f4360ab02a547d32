// Every string an event carries to GA4, checked as the last step before it is sent: rules
// may copy free-form text (a lead's source, a coupon name, an override's own properties)
// and no rule can know what an account puts there. Page URLs keep their shape with the
// telling part sent as `(redacted)` (page-urls.ts); any other string that looks like an
// identifier (identifier-like.ts) is dropped, as a user property is: a parameter half
// redacted would still be a different value in every report.
import { IDENTIFIER_KINDS, type IdentifierTest } from './identifier-like.ts';
import { PAGE_URL_PARAMS, redactUrl } from './page-urls.ts';

type Json = Record<string, unknown>;

/** Parameters holding ids (an order, a session, a product, a list, a promotion): a long number there is the id, not a phone. */
const ID_PARAMS = new Set(['transaction_id', 'session_id', 'item_id', 'item_list_id', 'promotion_id']);
const PAGE_URLS: ReadonlySet<string> = new Set(PAGE_URL_PARAMS);
const DROP = Symbol('drop');

/** The event without anything that identifies someone, and a warning for each thing taken out. */
export function scrubEvent(event: Json, isIdentifier: IdentifierTest): { event: Json; warnings: string[] } {
  const warnings: string[] = [];
  const out: Json = {};
  for (const [key, value] of Object.entries(event)) {
    if (key === 'name') out.name = value; // the rule's event name, never a person's
    else if (key === 'params' && isObject(value)) out.params = scrubParams(value, isIdentifier, warnings);
    else {
      const kept = scrub(value, `event field ${key}`, key, isIdentifier, warnings);
      if (kept !== DROP) out[key] = kept;
    }
  }
  return { event: out, warnings };
}

function scrubParams(params: Json, isIdentifier: IdentifierTest, warnings: string[]): Json {
  const out: Json = {};
  for (const [name, value] of Object.entries(params)) {
    if (PAGE_URLS.has(name) && typeof value === 'string') {
      const { url, redacted } = redactUrl(value, isIdentifier);
      if (redacted) warnings.push(`${name} held what looks like an identifier (${IDENTIFIER_KINDS}); that part was sent as (redacted)`);
      out[name] = url;
      continue;
    }
    const kept = scrub(value, `parameter ${name}`, name, isIdentifier, warnings);
    if (kept !== DROP) out[name] = kept;
  }
  return out;
}

/** A value with its identifier-like strings taken out, at any depth (items[] and their fields included). */
function scrub(value: unknown, path: string, key: string, isIdentifier: IdentifierTest, warnings: string[]): unknown {
  if (typeof value === 'string') {
    if (!isIdentifier(value, ID_PARAMS.has(key) ? 'none' : 'any')) return value;
    warnings.push(`${path} looks like an identifier (${IDENTIFIER_KINDS}) and was not sent`);
    return DROP;
  }
  if (Array.isArray(value)) {
    return value.map((v) => scrub(v, `${path}[]`, key, isIdentifier, warnings)).filter((v) => v !== DROP);
  }
  if (isObject(value)) {
    const out: Json = {};
    for (const [k, v] of Object.entries(value)) {
      const kept = scrub(v, `${path}.${k}`, k, isIdentifier, warnings);
      if (kept !== DROP) out[k] = kept;
    }
    return out;
  }
  return value;
}

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
