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

/**
 * The event without anything that identifies someone, and a warning for each thing taken out.
 * Objects and arrays are copied only where something changed: most events carry nothing to
 * take out, and this runs for every event sent.
 */
export function scrubEvent(event: Json, isIdentifier: IdentifierTest): { event: Json; warnings: string[] } {
  const warnings: string[] = [];
  const scrubbed = mapEntries(event, (key, value) => {
    if (key === 'name') return value; // the rule's event name, never a person's
    if (key === 'params' && isObject(value)) return mapEntries(value, (name, v) => scrubParam(name, v, isIdentifier, warnings));
    return scrub(value, 'event field', '', key, isIdentifier, warnings);
  });
  return { event: scrubbed, warnings };
}

function scrubParam(name: string, value: unknown, isIdentifier: IdentifierTest, warnings: string[]): unknown {
  if (!PAGE_URLS.has(name) || typeof value !== 'string') return scrub(value, 'parameter', '', name, isIdentifier, warnings);
  const { url, redacted } = redactUrl(value, isIdentifier);
  if (redacted) warnings.push(`${name} held what looks like an identifier (${IDENTIFIER_KINDS}); that part was sent as (redacted)`);
  return url;
}

/**
 * `value` (found at `parent`.`key`) with its identifier-like strings taken out, at any depth
 * (items[] and their fields included); DROP when it is such a string itself.
 */
function scrub(value: unknown, kind: string, parent: string, key: string, isIdentifier: IdentifierTest, warnings: string[]): unknown {
  if (typeof value === 'string') {
    if (!isIdentifier(value, ID_PARAMS.has(key) ? 'none' : 'any')) return value;
    warnings.push(`${kind} ${pathOf(parent, key)} looks like an identifier (${IDENTIFIER_KINDS}) and was not sent`);
    return DROP;
  }
  if (Array.isArray(value)) {
    const members = `${pathOf(parent, key)}[]`;
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const kept = scrub(value[i], kind, '', members, isIdentifier, warnings);
      if (out === undefined && kept !== value[i]) out = value.slice(0, i);
      if (out !== undefined && kept !== DROP) out.push(kept);
    }
    return out ?? value;
  }
  if (isObject(value)) {
    const path = pathOf(parent, key);
    return mapEntries(value, (k, v) => scrub(v, kind, path, k, isIdentifier, warnings));
  }
  return value;
}

const pathOf = (parent: string, key: string) => (parent === '' ? key : `${parent}.${key}`);

/** `obj` with each value replaced by `fn`'s (left out for DROP); `obj` itself when nothing changed. */
function mapEntries(obj: Json, fn: (key: string, value: unknown) => unknown): Json {
  const keys = Object.keys(obj);
  let out: Json | undefined;
  for (let i = 0; i < keys.length; i++) {
    const value = obj[keys[i]];
    const kept = fn(keys[i], value);
    if (out === undefined && kept !== value) {
      out = {};
      for (let j = 0; j < i; j++) out[keys[j]] = obj[keys[j]];
    }
    if (out !== undefined && kept !== DROP) out[keys[i]] = kept;
  }
  return out ?? obj;
}

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
