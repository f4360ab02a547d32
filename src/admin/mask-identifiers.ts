// An event's trace as the console shows it unasked: the user's identifiers replaced by a
// mask, in the payload and wherever the same text reappears (a webhook's body, a response
// echoing it, a URL carrying it percent-encoded), so clear identifiers leave only on a
// logged reveal.
//
// It fails closed. In `payload.user` every value is masked except a short list of fields
// that identify no one (VISIBLE_USER_FIELDS), under exactly those keys, and even those are
// masked when their text looks like an e-mail address or a phone number. So an extra key
// (`user.Email`, `user.mail`, `user.properties.email`) is masked whatever it is called.
// Everywhere else in the trace, the user's masked values are masked where they reappear
// (as typed, in any case, percent- or form-encoded once or twice, a phone by its digits),
// and so is any e-mail-like text (`jane@…`, `jane%40…`, `jane%2540…`).

export const IDENTIFIER_MASK = '[masked]';

/**
 * The `payload.user` fields shown clear: ids the operator needs to find a customer, the
 * country, and the order statistics. Any other key, any case, is masked.
 */
export const VISIBLE_USER_FIELDS = [
  'id', 'external_id', 'country', 'orders_total_number', 'orders_canceled_number', 'orders_total_value',
  'orders_refunded_value', 'predicted_value', 'created_at',
] as const;
const VISIBLE = new Set<string>(VISIBLE_USER_FIELDS);

/** Shorter values are masked only where a whole string equals them (a two-letter name would hit every hash). */
const SUBSTRING_MIN = 5;
/** Values shorter than this are masked in `user` but not looked for elsewhere (a `"1"` would hit every count). */
const WHOLE_MIN = 2;
/** Percent-decoding rounds before a value counts as stable (double encoding included). */
const DECODE_ROUNDS = 3;

/**
 * An e-mail address, its `@` as typed or percent-encoded once or twice. Every part is
 * bounded (as addresses are), so a long string without one costs linear time, not quadratic.
 */
const EMAIL_SOURCE = String.raw`[a-z0-9._%+-]{1,64}(?:@|%40|%2540)[a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63}){0,8}\.[a-z]{2,24}`;
/** What every e-mail match contains: strings without it are not scanned for one. */
const AT = /@|%40/i;
/** A phone number: 9 or more digits, maybe with a leading +, spaces, dots, dashes, parentheses. */
const PHONE = /^\+?[\d\s().-]+$/;
const MIN_PHONE_DIGITS = 9;

type Json = unknown;

/** `s` and what it decodes to, percent- or form-decoded, until it stops changing. */
function decodedForms(s: string): string[] {
  const forms = [s];
  let cur = s;
  for (let i = 0; i < DECODE_ROUNDS && /%[0-9a-f]{2}|\+/i.test(cur); i++) {
    let next: string;
    try {
      next = decodeURIComponent(cur.replace(/\+/g, ' '));
    } catch {
      break;
    }
    if (next === cur) break;
    forms.push((cur = next));
  }
  return forms;
}

const digits = (s: string) => s.replace(/\D/g, '');
const isPhoneLike = (s: string) => PHONE.test(s.trim()) && digits(s).length >= MIN_PHONE_DIGITS;
const WHOLE_EMAIL = new RegExp(`^\\s*${EMAIL_SOURCE}\\s*$`, 'i');
const isEmailLike = (s: string) => AT.test(s) && WHOLE_EMAIL.test(s);

/** Text that identifies a person by its shape alone, in any of its decoded forms. */
export function looksLikeIdentifier(s: string): boolean {
  return decodedForms(s).some((f) => isEmailLike(f) || isPhoneLike(f));
}

/** A value of `user` masked whole: every string and number leaf, keys kept (so the operator sees what was sent). */
function maskAll(v: Json, clear: string[]): Json {
  if (typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))) {
    clear.push(String(v));
    return IDENTIFIER_MASK;
  }
  if (Array.isArray(v)) return v.map((x) => maskAll(x, clear));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, maskAll(x, clear)]));
  return v;
}

/** `user` with every value masked but the visible fields' (unless identifier-shaped), and the clear texts it masked. */
function maskUser(user: Json): { user: Json; clear: string[] } {
  const clear: string[] = [];
  if (!user || typeof user !== 'object' || Array.isArray(user)) return { user: maskAll(user, clear), clear };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(user)) {
    const shown = VISIBLE.has(k) && (v === null || typeof v !== 'object') && (typeof v !== 'string' || !looksLikeIdentifier(v));
    out[k] = shown ? v : maskAll(v, clear);
  }
  return { user: out, clear };
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The spellings a clear value may take in a URL, a form body or a re-encoded parameter. */
function spellings(value: string): string[] {
  const once = encodeURIComponent(value);
  const forms = [value, once, once.replace(/%20/g, '+'), encodeURIComponent(once)];
  if (isPhoneLike(value)) forms.push(digits(value), `+${digits(value)}`, `%2B${digits(value)}`);
  return forms;
}

/** Replaces identifiers in any JSON value: a string equal to a clear value, or containing a long one or an e-mail (any case, any encoding). */
function scrubber(clear: readonly string[]): (v: Json) => Json {
  const values = [...new Set(clear.map((v) => v.trim()).filter((v) => v.length >= WHOLE_MIN))];
  const whole = new Set(values.flatMap((v) => decodedForms(v)).map((v) => v.toLowerCase()));
  // Longest first, so a value containing another is replaced whole.
  const long = [...new Set(values.flatMap(spellings).filter((v) => v.length >= SUBSTRING_MIN))].sort((a, b) => b.length - a.length);
  const valuesPattern = long.length === 0 ? null : new RegExp(long.map(escape).join('|'), 'gi');
  const email = new RegExp(EMAIL_SOURCE, 'gi');
  const replace = (s: string) => {
    const out = valuesPattern === null ? s : s.replace(valuesPattern, IDENTIFIER_MASK);
    return AT.test(out) ? out.replace(email, IDENTIFIER_MASK) : out;
  };
  const scrubString = (s: string): string => {
    const forms = decodedForms(s);
    if (forms.some((f) => whole.has(f.trim().toLowerCase()))) return IDENTIFIER_MASK;
    const out = replace(s);
    // What only shows once decoded (an encoding no spelling above covers): the whole string goes.
    return out === s && forms.slice(1).some((f) => replace(f) !== f) ? IDENTIFIER_MASK : out;
  };
  const walk = (v: Json): Json => {
    if (typeof v === 'string') return scrubString(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk;
}

/**
 * The trace with `payload.user` masked (all but VISIBLE_USER_FIELDS) and the masked text,
 * and any e-mail address, masked everywhere else in it (payload, deliveries' requests and
 * responses). Marked `identifiers: 'masked'`.
 */
export function maskTraceIdentifiers<T extends { event: { payload: unknown } }>(trace: T): T & { identifiers: 'masked' } {
  const payload = trace.event.payload;
  const hasUser = payload !== null && typeof payload === 'object' && !Array.isArray(payload) && 'user' in payload;
  const user = hasUser ? maskUser((payload as Record<string, unknown>).user) : { user: undefined, clear: [] };
  const masked = scrubber(user.clear)(trace) as T;
  if (hasUser) (masked.event.payload as Record<string, unknown>).user = user.user;
  return { ...masked, identifiers: 'masked' };
}
