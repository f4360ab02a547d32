// GA4 user properties from a rule's `user_properties`: each value wrapped as {value}, GA4's
// reserved names left out, and never an identifier (identifier-like.ts). Rules see the user's
// identifiers hashed, but a hash is an identifier too, and `properties` may hold anything.
import { IDENTIFIER_KINDS, type IdentifierTest } from './identifier-like.ts';

type Json = Record<string, unknown>;

/** Reserved by the Measurement Protocol ("Send user properties", "Reserved names"). */
const RESERVED_NAMES = new Set(['first_open_time', 'first_visit_time', 'last_deep_link_referrer', 'user_id', 'first_open_after_install']);
const RESERVED_PREFIXES = ['google_', 'ga_', 'firebase_'];

export interface UserProperties {
  /** Absent when nothing is left to send. */
  properties?: Json;
  warnings: string[];
}

/** The `user_properties` member of a request body, from what the rule produced. */
export function userProperties(raw: unknown, isIdentifier: IdentifierTest): UserProperties {
  const warnings: string[] = [];
  if (!isObject(raw)) return { warnings };
  const out: Json = {};
  for (const [name, given] of Object.entries(raw)) {
    if (given === null || given === undefined) continue;
    if (RESERVED_NAMES.has(name) || RESERVED_PREFIXES.some((p) => name.startsWith(p))) {
      warnings.push(`user property ${name} has a name GA4 reserves and was not sent`);
      continue;
    }
    const property = asProperty(given);
    if (property === undefined) {
      warnings.push(`user property ${name} is neither a string, a number, true/false nor {value} and was not sent`);
      continue;
    }
    if (typeof property.value === 'string' && isIdentifier(property.value)) {
      warnings.push(`user property ${name} looks like an identifier (${IDENTIFIER_KINDS}) and was not sent`);
      continue;
    }
    out[name] = property;
  }
  return Object.keys(out).length > 0 ? { properties: out, warnings } : { warnings };
}

/** `3` → `{value: 3}`; `{value, timestamp_micros?}` kept as such; anything else undefined. */
function asProperty(given: unknown): Json | undefined {
  if (isScalar(given)) return { value: given };
  if (!isObject(given) || !isScalar(given.value)) return undefined;
  const property: Json = { value: given.value };
  if (typeof given.timestamp_micros === 'number' && Number.isFinite(given.timestamp_micros)) property.timestamp_micros = given.timestamp_micros;
  return property;
}

function isScalar(v: unknown): v is string | number | boolean {
  return typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
}

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
