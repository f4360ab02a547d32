// The `user` member: e-mail and phone are trimmed, and refused pre-hashed on cart_viewed,
// whose reference wants plaintext (the service hashes before sending). Formats come from the schema.
import { parseTimestamp } from '../formats.ts';
import { dropNulls, isRecord, isSha256Hex } from '../guards.ts';
import type { User } from '../types.ts';
import { fail, warnUndefinedMembers, type RuleContext } from './rule-context.ts';

const USER_MEMBERS = [
  'id', 'email', 'phone', 'first_name', 'last_name', 'country', 'region', 'city', 'street',
  'postal_code', 'orders_total_number', 'orders_canceled_number', 'orders_total_value',
  'orders_refunded_value', 'predicted_value', 'created_at', 'properties',
] as const;
const CONTACTS = [
  ['email', 'e-mail address'],
  ['phone', 'phone number'],
] as const;
const UNDEFINED_IN_SPEC = ['external_id'] as const;

/** The user object normalised in place, or undefined when absent (or not an object: a schema error). */
export function normaliseUser(raw: unknown, rc: RuleContext): User | undefined {
  if (!isRecord(raw)) return undefined;
  dropNulls(raw, USER_MEMBERS);
  for (const [member, what] of CONTACTS) {
    const v = raw[member];
    if (typeof v !== 'string') continue;
    const trimmed = v.trim();
    raw[member] = trimmed;
    if (rc.cart && isSha256Hex(trimmed)) {
      fail(rc, `user.${member}`, 'HASHED_VALUE_NOT_ALLOWED',
        `user.${member} looks like a SHA-256 hash, but cart_viewed needs the plaintext ${what}; the service hashes it before sending`);
    }
  }
  if (typeof raw.created_at === 'string') raw.created_at = parseTimestamp(raw.created_at) ?? raw.created_at;
  warnUndefinedMembers(rc, raw, 'user', UNDEFINED_IN_SPEC);
  return raw as User;
}
