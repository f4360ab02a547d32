// The custom json-logic operations rule authors may use. Each is total: a missing or
// mistyped input gives null (left out of the output), never an exception, unless the rule
// itself is malformed (odd `object` pairs, an unknown `iso_datetime` format, a bad key).
// json-logic evaluates every argument against the current data before calling these.
import { cookieJar, type CookieInput } from '../schema/cookie-jar.ts';
import { isPlainObject, setPath } from '../destinations/dot-path.ts';
import { chargeText, spend } from './work-meter.ts';
import { boundedJson } from './bounded-values.ts';

type Operation = (this: unknown, ...args: unknown[]) => unknown;

/** A finite number, or a string holding one (`" 12.5 "`); otherwise undefined. */
export function toFiniteNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v.trim());
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

/** null, undefined, NaN and ±Infinity: values that mean "absent" in an output. */
export function isAbsent(v: unknown): boolean {
  return v === null || v === undefined || (typeof v === 'number' && !Number.isFinite(v));
}

function isEmpty(v: unknown): boolean {
  return isAbsent(v) || (typeof v === 'string' && v.trim() === '') || (Array.isArray(v) && v.length === 0);
}

/** Strips binary floating-point noise: 0.1 + 0.2 → 0.3. */
const clean = (n: number): number => Number(n.toPrecision(15));

/** Half away from zero at `decimals` places, via exponent notation so 1.005 → 1.01. */
function roundTo(n: number, decimals: number): number {
  const r = Math.round(Number(`${Math.abs(n)}e${decimals}`));
  return Math.sign(n) * Number(`${r}e-${decimals}`) || 0;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Elements of an array, or members of an object: what reading every one of them walks. */
function memberCount(v: unknown): number {
  if (Array.isArray(v)) return v.length;
  if (v === null || typeof v !== 'object') return 0;
  let n = 0;
  for (const k in v) if (Object.hasOwn(v, k)) n++;
  return n;
}

/** Keys given as separate arguments or as one array (`"a", "b"` or `["a", "b"]`). */
const keyList = (args: unknown[]): string[] => args.flat().filter((k): k is string => typeof k === 'string');

function stringOf(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if ((typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean') return String(v);
  return null;
}

/**
 * Custom operations by name. Method syntax on purpose: json-logic binds `this` to the
 * current data, which `cookie` reads.
 */
export const CUSTOM_OPERATIONS: Readonly<Record<string, Operation>> = {
  /** `{"object": ["item_id", {"var": "id"}, "price.value", 5]}` → `{item_id: …, price: {value: 5}}`; absent values dropped. */
  object(...pairs) {
    if (pairs.length % 2 !== 0) throw new Error(`object takes key/value pairs; got ${pairs.length} arguments`);
    const out: Record<string, unknown> = {};
    for (let i = 0; i < pairs.length; i += 2) {
      const key = pairs[i];
      if (typeof key !== 'string') throw new Error(`object: key ${i / 2 + 1} is not a string`);
      if (isAbsent(pairs[i + 1])) continue;
      // Keys may be computed from event data, so the message must not quote them.
      try {
        setPath(out, key, pairs[i + 1], 'strict');
      } catch {
        throw new Error(`object: key ${i / 2 + 1} is not a usable dot path or conflicts with an earlier key`);
      }
    }
    return out;
  },

  /**
   * `{"cookie": "session"}` → the first `session` value (trimmed, percent-decoded) of the rule data's
   * top-level `cookies`, or null. It reads `this`, which inside map/filter/reduce is the
   * element, so there it finds nothing: read cookies outside those. `{"cookie": ["session", list]}`
   * reads an explicit list (`[{name, value}]` or a name → value object) instead.
   */
  cookie(name, list?) {
    if (typeof name !== 'string') return null;
    const source = arguments.length >= 2 ? list : isPlainObject(this) ? this.cookies : undefined;
    spend(memberCount(source)); // the jar reads every cookie
    return cookieJar(source as CookieInput).all(name)[0] ?? null;
  },

  /** `{"sum_items": [{"var": "products"}]}` → Σ price × quantity (quantity defaults to 1); optional field names. */
  sum_items(items, priceKey = 'price', quantityKey = 'quantity') {
    if (!Array.isArray(items)) return null;
    spend(items.length);
    let sum = 0;
    for (const item of items) {
      if (!isPlainObject(item)) continue;
      const price = toFiniteNumber(item[String(priceKey)]);
      if (price === undefined) continue;
      sum += price * (toFiniteNumber(item[String(quantityKey)]) ?? 1);
    }
    return clean(sum);
  },

  /** `{"sum": [{"var": "products"}, "quantity"]}` → Σ of that field; without a field, Σ of the numbers. */
  sum(items, field?) {
    if (!Array.isArray(items)) return null;
    spend(items.length);
    let sum = 0;
    for (const item of items) {
      const v = typeof field === 'string' ? (isPlainObject(item) ? item[field] : undefined) : item;
      sum += toFiniteNumber(v) ?? 0;
    }
    return clean(sum);
  },

  /** `{"count": {"var": "products"}}` → the array's length; 0 for anything else. */
  count(items) {
    return Array.isArray(items) ? items.length : 0;
  },

  /** Milliseconds → microseconds (integer). */
  ms_to_us(ms) {
    const n = toFiniteNumber(ms);
    return n === undefined ? null : Math.round(n * 1000);
  },

  /** Milliseconds → whole seconds (floored), e.g. an `event_time` in Unix seconds. */
  ms_to_s(ms) {
    const n = toFiniteNumber(ms);
    return n === undefined ? null : Math.floor(n / 1000);
  },

  /** The first argument that is not null, blank, an empty array or NaN; else null. */
  first(...values) {
    return values.find((v) => !isEmpty(v)) ?? null;
  },

  /** `{"round": [x, 2]}`: half away from zero to N decimals (default 2, 0–10). */
  round(value, decimals = 2) {
    const n = toFiniteNumber(value);
    const d = toFiniteNumber(decimals);
    if (n === undefined || d === undefined || !Number.isInteger(d) || d < 0 || d > 10) return null;
    return roundTo(n, d);
  },

  lower(value) {
    const text = stringOf(value);
    if (text === null) return null;
    chargeText(text.length, 'lower\'s text');
    return text.toLowerCase();
  },

  upper(value) {
    const text = stringOf(value);
    if (text === null) return null;
    chargeText(text.length, 'upper\'s text');
    return text.toUpperCase();
  },

  /**
   * Strings as they are, numbers and booleans as text, arrays and objects as JSON (built
   * within the cap on a rule's values, and charged for it); null stays null.
   */
  to_string(value) {
    if (isAbsent(value)) return null;
    return stringOf(value) ?? boundedJson(value) ?? null;
  },

  /** A number, or a string holding one; else null. */
  to_number(value) {
    return toFiniteNumber(value) ?? null;
  },

  /**
   * ms since epoch → UTC text. Format `rfc3339_space` (default): RFC 3339 with a space for
   * the `T`, whole seconds and a numeric offset, `2023-11-14 22:13:20+00:00`;
   * `iso`: `2023-11-14T22:13:20.000Z`; `date`: `2023-11-14`.
   */
  iso_datetime(ms, format = 'rfc3339_space') {
    const n = toFiniteNumber(ms);
    const d = n === undefined ? undefined : new Date(n);
    if (d === undefined || Number.isNaN(d.getTime())) return null;
    const date = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
    switch (format) {
      case 'rfc3339_space':
        return `${date} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}+00:00`;
      case 'iso':
        return d.toISOString();
      case 'date':
        return date;
      default:
        throw new Error('iso_datetime: unknown format; use rfc3339_space, iso or date');
    }
  },

  /** `{"pick": [{"var": "user"}, "id", "country"]}` → only those keys (a missing one is left out). */
  pick(source, ...keys) {
    if (!isPlainObject(source)) return null;
    const out: Record<string, unknown> = {};
    const wanted = keyList(keys);
    spend(wanted.length);
    for (const k of wanted) if (Object.hasOwn(source, k) && !isAbsent(source[k])) out[k] = source[k];
    return out;
  },

  /** `{"omit": [{"var": "user"}, "email", "phone"]}` → every key but those. */
  omit(source, ...keys) {
    if (!isPlainObject(source)) return null;
    const drop = new Set(keyList(keys));
    const entries = Object.entries(source);
    spend(entries.length + drop.size);
    return Object.fromEntries(entries.filter(([k]) => !drop.has(k)));
  },
};
