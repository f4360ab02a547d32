// The `id` query parameter (the script id of endpoints 1–3) as Koa's ctx.query gives it,
// read without parsing the whole query: Koa builds a URLSearchParams and an object of every
// key for it, a few per cent of endpoint 1. A query string of plain characters only (no
// percent-escape, no `+`, nothing beyond ASCII letters, digits and `_.~-=&`) splits exactly
// as URLSearchParams splits it; any other is left to Koa.
import type { AppContext } from './types.ts';

/** Characters that URLSearchParams keeps as they are, and `=` and `&`, which it splits at. */
const PLAIN_QUERY = /^[\w.~=&-]*$/;

/**
 * `ctx.query.id`: undefined when absent, the value when given once, every value (an array)
 * when given more than once.
 * @example queryId(ctx) // '?id=AB12CD34' → 'AB12CD34'; '?id=a&id=b' → ['a', 'b']
 */
export function queryId(ctx: AppContext): string | string[] | undefined {
  const q = ctx.querystring;
  if (!PLAIN_QUERY.test(q)) return ctx.query.id;
  let first: string | undefined;
  let all: string[] | undefined;
  let from = 0;
  while (from <= q.length) {
    let end = q.indexOf('&', from);
    if (end < 0) end = q.length;
    // Only a member that starts `id=` or is exactly `id` is the parameter.
    if (q.charCodeAt(from) === 0x69 && q.charCodeAt(from + 1) === 0x64 && (from + 2 === end || q.charCodeAt(from + 2) === 0x3d)) {
      const value = from + 2 === end ? '' : q.slice(from + 3, end);
      if (first === undefined) first = value;
      else (all ??= [first]).push(value);
    }
    from = end + 1;
  }
  return all ?? first;
}
