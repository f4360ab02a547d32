// The string formats of the payload (ISO 4217, event.id, IP, http(s) URL, e-mail, phone,
// numeric string, timestamp): one table gives ajv the check and the translator the code and
// the sentence, so a format's rule and its error message cannot drift apart.
import { isIP } from 'node:net';
import type { ValidationCode } from '../errors.ts';
import { isCurrencyCode } from './currencies.ts';
import { isSha256Hex, quote } from './guards.ts';

export interface PayloadFormat {
  /** What ajv calls to check a string. */
  validate: (s: string) => boolean;
  /** The issue code of a string that fails. */
  code: ValidationCode;
  /** A sentence for a string that fails; never echoes personal data (e-mail, phone, IP, URL). */
  describe: (field: string, s: string) => string;
}

const EVENT_ID_MAX = 128;
const CONTROL_OR_LONE_SURROGATE = /[\p{Cc}\p{Cs}]/u;
const EDGE_WHITESPACE = /^\s|\s$/;

/** Why `s` is not a valid event.id, or null when it is one. */
export function eventIdProblem(s: string): string | null {
  if (s.length === 0) return 'must not be empty';
  if (s.length > EVENT_ID_MAX) {
    const chars = [...s].length;
    if (chars > EVENT_ID_MAX) return `must be at most ${EVENT_ID_MAX} characters long (it has ${chars})`;
  }
  if (CONTROL_OR_LONE_SURROGATE.test(s)) return 'must not contain control characters such as line breaks or tabs';
  if (EDGE_WHITESPACE.test(s)) return 'must not start or end with whitespace';
  return null;
}

const HTTP_URL_START = /^https?:\/\/[^\s/?#]/i;
const isHttpUrl = (s: string): boolean => HTTP_URL_START.test(s) && URL.canParse(s);

const EMAIL = /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$/;
const EMAIL_MAX = 254;
function isEmailOrHash(raw: string): boolean {
  const s = raw.trim();
  return isSha256Hex(s) || (s.length <= EMAIL_MAX && EMAIL.test(s));
}

const LETTER = /\p{L}/u;
const PHONE_MIN_DIGITS = 5;
/** Phones are normalised later, so only the hopeless ones are refused: letters or too few digits. */
function isPhoneOrHash(raw: string): boolean {
  const s = raw.trim();
  if (isSha256Hex(s)) return true;
  if (LETTER.test(s)) return false;
  let digits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) digits++;
  }
  return digits >= PHONE_MIN_DIGITS;
}

const NUMERIC_STRING = /^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)\s*$/;
/** The number in a numeric string such as `"19"` or `" 9.5 "`, or null. */
export const parseNumericString = (s: string): number | null => (NUMERIC_STRING.test(s) ? Number(s) : null);

const DIGITS_TIMESTAMP = /^\d{1,16}$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;
/**
 * Milliseconds since the epoch from a string timestamp: digits (already milliseconds) or an
 * ISO 8601 date; null for anything else.
 */
export function parseTimestamp(s: string): number | null {
  if (DIGITS_TIMESTAMP.test(s)) return Number(s);
  if (!ISO_DATE.test(s)) return null;
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? null : ms;
}

/** Format name (as used in the schemas' `format`) → its check, code and message. */
export const PAYLOAD_FORMATS = {
  'iso4217': {
    validate: isCurrencyCode,
    code: 'INVALID_FORMAT',
    describe: (f, s) => `${f} ${quote(s)} is not an ISO 4217 currency code (for example "EUR", "USD" or "RON")`,
  },
  'event-id': {
    validate: (s) => eventIdProblem(s) === null,
    code: 'INVALID_FORMAT',
    describe: (f, s) => `${f} ${eventIdProblem(s) ?? 'is not a valid event id'}`,
  },
  'ip-address': {
    validate: (s) => isIP(s) !== 0,
    code: 'INVALID_FORMAT',
    describe: (f) => `${f} is not a valid IPv4 or IPv6 address`,
  },
  'http-url': {
    validate: isHttpUrl,
    code: 'INVALID_FORMAT',
    describe: (f) => `${f} must be an absolute URL starting with http:// or https://`,
  },
  'email-or-sha256': {
    validate: isEmailOrHash,
    code: 'INVALID_FORMAT',
    describe: (f) =>
      `${f} is not a valid e-mail address; send the plaintext address or its SHA-256 hash (64 hex characters)`,
  },
  'phone-or-sha256': {
    validate: isPhoneOrHash,
    code: 'INVALID_FORMAT',
    describe: (f) =>
      `${f} is not a phone number: it needs at least ${PHONE_MIN_DIGITS} digits and no letters (E.164 such as "+40721234567" is best), or a SHA-256 hash of 64 hex characters`,
  },
  'numeric-string': {
    validate: (s) => parseNumericString(s) !== null,
    code: 'INVALID_TYPE',
    describe: (f, s) => `${f} must be a number or a numeric string such as "19", got ${quote(s)}`,
  },
  'timestamp': {
    validate: (s) => parseTimestamp(s) !== null,
    code: 'INVALID_FORMAT',
    describe: (f, s) =>
      `${f} must be a Unix timestamp in milliseconds (a number) or an ISO 8601 date string, got ${quote(s)}`,
  },
} satisfies Record<string, PayloadFormat>;

export type PayloadFormatName = keyof typeof PAYLOAD_FORMATS;
