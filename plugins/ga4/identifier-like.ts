// What must never reach Google Analytics in clear text: Google forbids sending anything it
// could recognise as personal data. A text is refused when, read as a person would read it
// (percent-escapes decoded, compatibility forms such as a fullwidth ＠ folded, accents and
// case ignored), it
//   - holds an `@` (an e-mail, or something close enough to one),
//   - is a SHA-256 hash (a stable identifier all the same),
//   - holds something written like a phone number: 9 or more digits with the spaces,
//     hyphens, dots and brackets phones are written with (whoever's phone it is),
//   - is one of the user's identifiers (id, external id, e-mail, phone in any prefix, first
//     or last name, street, postcode, city), or holds their first and last name together
//     in any order and spelling (`Jane+Doe`, `doe-jane`, `janedoe`), or their phone among other text.
import { unescape } from 'node:querystring';
import { isSha256Hex, type User } from 'tracklane/sdk';

/** What a warning says was found, for every caller's sentence. */
export const IDENTIFIER_KINDS = "an e-mail, a phone, a hash or one of the user's identifiers";

/**
 * How much of the phone test applies: `any` for page URL parts, parameters and user
 * properties; `formatted` for the user agent, whose app builds end with bare 9-digit build
 * numbers (Instagram, Facebook), so only a number with a `+` or separators counts there;
 * `none` for ids (an order, a session, a product), where a long number is the id itself.
 */
export type PhoneCheck = 'any' | 'formatted' | 'none';

/** A test for "this text identifies someone", knowing the event's user. */
export type IdentifierTest = (text: string, phones?: PhoneCheck) => boolean;

/** The user fields whose values must never come back elsewhere in the request. */
const IDENTIFIER_FIELDS = ['id', 'external_id', 'email', 'phone', 'first_name', 'last_name', 'street', 'postal_code', 'city'] as const;
/** Shorter values (an id `7`, a name `Al`) would match page paths and counts by chance. */
const MIN_OWN_LENGTH = 3;
/** `%2540` is an `@` encoded twice; a text still changing after this many decodings is refused. */
const MAX_DECODINGS = 3;
const PHONE_MIN_DIGITS = 9;
/** The last digits that name a subscriber whatever prefix (+40, 0040, 0) is written before them. */
const SUBSCRIBER_DIGITS = 9;

/** A run of digits as phones are written: an optional `+` or `(`, digits, spaces, hyphens, dots, brackets. */
const PHONE_RUN = /\+?\(?\d[\d ()\-.]*\d/g;
/** A run glued to these is part of a longer token (`SKU-123456789`, `Build/TP1A.220624`, `v_123456789x`), not a phone. */
const GLUED_BEFORE = /[\p{L}\p{N}_/.-]/u;
const GLUED_AFTER = /[\p{L}\p{N}_/]/u;
/** A single digit next to a dot: a version (`120.0.6099.109`) or an address (`10.0.0.12`), not a phone. */
const VERSION_LIKE = /(?:^|\D)\d\.|\.\d(?:\D|$)/;

export function identifierTest(user: User | undefined): IdentifierTest {
  let own: OwnIdentifiers | undefined; // made on the first text that is neither empty, an e-mail nor a hash (this runs per GA4 event)
  return (value, phones = 'any') => {
    const text = readable(value);
    if (text === undefined) return true;
    if (text === '') return false;
    if (text.includes('@') || isSha256Hex(text)) return true;
    if (phones !== 'none' && hasPhone(text, phones === 'any')) return true;
    own ??= ownIdentifiers(user);
    return own.matches(text);
  };
}

/**
 * The text as a reader sees it: percent-decoded until stable (undefined when it still changes
 * after MAX_DECODINGS: nothing legitimate is encoded that often), folded to compatibility forms
 * without accents, lower-cased and trimmed. Malformed escapes are kept as they are, so a stray
 * `%ZZ` does not stop the rest from being decoded.
 */
function readable(value: string): string | undefined {
  const folded = fold(value); // first, so a fullwidth `％40` is an escape too
  let text = folded;
  for (let round = 0; ; round++) {
    const next = text.includes('%') ? unescape(text) : text;
    if (next === text) break;
    if (round === MAX_DECODINGS) return undefined;
    text = next;
  }
  return text === folded ? text : fold(text); // again for what the escapes spelled (`%EF%BC%A0` is `＠`)
}

/** Plain ASCII needs no Unicode folding (most texts: this runs for every string of every event). */
const ASCII = /^[\x00-\x7f]*$/;

function fold(text: string): string {
  const plain = ASCII.test(text) ? text : text.normalize('NFKD').replace(/\p{M}/gu, '');
  return plain.toLowerCase().trim();
}

function words(text: string): string[] {
  return text.split(/[^\p{L}\p{N}]+/u).filter((w) => w !== '');
}

interface PhoneRun { run: string; digits: string; at: number }
const NO_RUNS: readonly PhoneRun[] = [];

/** Runs of `text` written like phone numbers, with the digits they hold (9 or more). */
function phoneRuns(text: string): readonly PhoneRun[] {
  if (digitCount(text) < PHONE_MIN_DIGITS) return NO_RUNS; // most texts: no regular expression, nothing allocated
  const runs: PhoneRun[] = [];
  for (const m of text.matchAll(PHONE_RUN)) {
    const digits = m[0].replace(/\D/g, '');
    if (digits.length >= PHONE_MIN_DIGITS) runs.push({ run: m[0], digits, at: m.index });
  }
  return runs;
}

function digitCount(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) n++;
  }
  return n;
}

/** Whether `text` holds a phone number; a bare run of digits counts only when `bare` allows it. */
function hasPhone(text: string, bare: boolean): boolean {
  for (const { run, digits, at } of phoneRuns(text)) {
    if (GLUED_BEFORE.test(text[at - 1] ?? '') || GLUED_AFTER.test(text[at + run.length] ?? '')) continue;
    if (VERSION_LIKE.test(run)) continue;
    if (bare || run !== digits) return true;
  }
  return false;
}

interface OwnIdentifiers {
  matches(text: string): boolean;
}

/** The user's identifiers, folded as texts are; phones by their subscriber digits; the full name by its words. */
function ownIdentifiers(user: User | undefined): OwnIdentifiers {
  const values = new Set<string>();
  const phones = new Set<string>();
  if (user !== undefined) {
    for (const field of IDENTIFIER_FIELDS) {
      const raw = user[field];
      for (const v of Array.isArray(raw) ? raw : [raw]) {
        if (typeof v !== 'string' && typeof v !== 'number') continue;
        const text = fold(String(v));
        if (text.length >= MIN_OWN_LENGTH) values.add(text);
        if (field === 'phone') for (const { digits } of phoneRuns(text)) phones.add(digits.slice(-SUBSCRIBER_DIGITS));
      }
    }
  }
  const first = nameWords(user?.first_name);
  const last = nameWords(user?.last_name);
  const fullName = [...first, ...last];
  // Written without a space (`janedoe`, `DoeJane`): long enough not to turn up inside other words by chance.
  const joined = [first.join('') + last.join(''), last.join('') + first.join('')];
  const hasFullName = first.length > 0 && last.length > 0;
  const joinedCounts = joined[0].length >= 2 * MIN_OWN_LENGTH;
  return {
    matches(text) {
      if (values.has(text)) return true;
      for (const { digits } of phoneRuns(text)) if (phones.has(digits.slice(-SUBSCRIBER_DIGITS))) return true;
      if (!hasFullName) return false;
      const present = words(text);
      if (fullName.every((w) => present.includes(w))) return true;
      return joinedCounts && present.some((w) => joined.some((name) => w.includes(name)));
    },
  };
}

function nameWords(name: unknown): string[] {
  return typeof name === 'string' ? words(fold(name)) : [];
}
