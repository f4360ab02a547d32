// An event's trace as the console shows it unasked: the user's e-mail, phone, names and
// address replaced by a mask, in the payload and wherever the same text reappears (a
// webhook's body, a response echoing it), so clear identifiers leave only on a logged reveal.

export const IDENTIFIER_MASK = '[masked]';

/** The user fields masked: what identifies a person; ids and country stay readable. */
export const MASKED_USER_FIELDS = ['email', 'phone', 'first_name', 'last_name', 'street', 'city', 'region', 'postal_code'] as const;

/** Shorter values are masked only where a whole string equals them (a two-letter name would hit every hash). */
const SUBSTRING_MIN = 5;

type Json = unknown;

function clearValues(user: unknown): string[] {
  if (!user || typeof user !== 'object') return [];
  const out: string[] = [];
  for (const field of MASKED_USER_FIELDS) {
    const v = (user as Record<string, unknown>)[field];
    for (const x of Array.isArray(v) ? v : [v]) {
      if (typeof x === 'string' && x.trim() !== '') out.push(x);
      else if (typeof x === 'number' && Number.isFinite(x)) out.push(String(x));
    }
  }
  // Longest first, so a value containing another is replaced whole.
  return [...new Set(out)].sort((a, b) => b.length - a.length);
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Replaces the user's identifiers in any JSON value: a string equal to one, or containing a long one (any case). */
function scrubber(values: readonly string[]): (v: Json) => Json {
  const whole = new Set(values.map((v) => v.toLowerCase()));
  const long = values.filter((v) => v.length >= SUBSTRING_MIN);
  const pattern = long.length === 0 ? null : new RegExp(long.map(escape).join('|'), 'gi');
  const scrubString = (s: string): string => {
    if (whole.has(s.toLowerCase())) return IDENTIFIER_MASK;
    return pattern === null ? s : s.replace(pattern, IDENTIFIER_MASK);
  };
  const walk = (v: Json): Json => {
    if (typeof v === 'string') return scrubString(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk;
}

function maskUser(user: Record<string, unknown>): Record<string, unknown> {
  const out = { ...user };
  for (const field of MASKED_USER_FIELDS) {
    const v = out[field];
    if (v === undefined || v === null || v === '') continue;
    out[field] = Array.isArray(v) ? v.map(() => IDENTIFIER_MASK) : IDENTIFIER_MASK;
  }
  return out;
}

/**
 * The trace with `payload.user`'s identifiers masked and their text masked everywhere else in
 * it (deliveries' requests and responses). Marked `identifiers: 'masked'`.
 */
export function maskTraceIdentifiers<T extends { event: { payload: unknown } }>(trace: T): T & { identifiers: 'masked' } {
  const payload = trace.event.payload as Record<string, unknown> | null;
  const user = payload && typeof payload === 'object' ? payload.user : undefined;
  const walk = scrubber(clearValues(user));
  const masked = walk(trace) as T;
  if (user && typeof user === 'object' && !Array.isArray(user)) {
    (masked.event.payload as Record<string, unknown>).user = maskUser(user as Record<string, unknown>);
  }
  return { ...masked, identifiers: 'masked' };
}
