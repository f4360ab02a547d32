// What must never reach Google Analytics in clear text: Google forbids sending anything it
// could recognise as personal data. A value is refused when it looks like an e-mail, is a
// SHA-256 hash (a stable identifier all the same), or is one of the event's user identifiers.
import { isSha256Hex } from '../../src/identifiers/index.ts';
import type { User } from '../../src/schema/types.ts';

/** The user fields whose values must never come back elsewhere in the request. */
const IDENTIFIER_FIELDS = ['id', 'external_id', 'email', 'phone', 'first_name', 'last_name', 'street'] as const;
/** Shorter values (an id `7`, a name `Al`) would match page paths and counts by chance. */
const MIN_OWN_LENGTH = 3;

/** A test for "this text identifies someone", knowing the event's user. */
export type IdentifierTest = (text: string) => boolean;

export function identifierTest(user: User | undefined): IdentifierTest {
  let own: Set<string> | undefined; // made on the first text that is neither empty, an e-mail nor a hash (this runs per GA4 event)
  return (value) => {
    const text = value.trim().toLowerCase();
    if (text === '') return false;
    if (text.includes('@') || isSha256Hex(text)) return true;
    own ??= identifierValues(user);
    if (own.has(text)) return true;
    const digits = phoneDigits(text);
    return digits !== undefined && own.has(`tel:${digits}`);
  };
}

/** The user's identifier values, trimmed and lower-cased; phones also as `tel:` + their last 9 digits. */
function identifierValues(user: User | undefined): Set<string> {
  const out = new Set<string>();
  if (user === undefined) return out;
  for (const field of IDENTIFIER_FIELDS) {
    const raw = user[field];
    if (!Array.isArray(raw)) addValue(out, field, raw);
    else for (const v of raw) addValue(out, field, v);
  }
  return out;
}

function addValue(out: Set<string>, field: (typeof IDENTIFIER_FIELDS)[number], v: unknown): void {
  if (typeof v !== 'string' && typeof v !== 'number') return;
  const text = String(v).trim().toLowerCase();
  if (text.length < MIN_OWN_LENGTH) return;
  out.add(text);
  const digits = field === 'phone' ? phoneDigits(text) : undefined;
  if (digits !== undefined) out.add(`tel:${digits}`);
}

/**
 * The last 9 digits of something written like a phone number (digits, spaces, +, -, dots,
 * brackets; at least 9 digits): the same subscriber whatever prefix (+40, 0040, 0) it has.
 */
function phoneDigits(text: string): string | undefined {
  if (!/^[\d\s+().-]+$/.test(text)) return undefined;
  const digits = text.replace(/\D/g, '');
  return digits.length >= 9 ? digits.slice(-9) : undefined;
}
