// Key order of a platform body, for plugins whose expected bytes follow the platform's
// reference (GA4, Google Ads): listed keys first, in that order, then the rest as they came.

type Json = Record<string, unknown>;

/**
 * A copy of `obj` with the keys of `order` first (those whose value is not undefined), then
 * its other keys in their own order.
 *
 * @example withKeyOrder({ b: 1, x: 2, a: 3 }, ['a', 'b']) // → { a: 3, b: 1, x: 2 }
 */
export function withKeyOrder(obj: Json, order: readonly string[]): Json {
  const out: Json = {};
  for (const key of order) if (obj[key] !== undefined) out[key] = obj[key];
  for (const [key, value] of Object.entries(obj)) if (!(key in out)) out[key] = value;
  return out;
}
