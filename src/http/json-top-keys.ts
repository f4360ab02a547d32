// The members of a JSON object text's top level, found before JSON.parse builds anything:
// a route that allows only some members (batch intake: `batch` alone) can refuse an unknown
// one, or one given twice (JSON.parse would keep the last silently, after building the
// first), for the price of one scan of the text. Same scanning as json-depth.ts.
import { CLOSE_BRACE, CLOSE_BRACKET, OPEN_BRACE, OPEN_BRACKET, QUOTE, stringEnd } from './json-depth.ts';

const COLON = 0x3a;

/** The first index at or after `from` that is not JSON whitespace (space, tab, LF, CR). */
function skipSpace(text: string, from: number): number {
  let i = from;
  for (let c = text.charCodeAt(i); c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d; c = text.charCodeAt(++i));
  return i;
}

/**
 * The top-level keys of `text`, decoded (`"b\u0061tch"` is `batch`), in order and with
 * repeats; undefined when `text` is not an object or does not scan as JSON (the parser then
 * says why).
 * @example topLevelKeys('{"batch":[{"a":1}],"batch":[]}') // → ['batch', 'batch']
 */
export function topLevelKeys(text: string): string[] | undefined {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== OPEN_BRACE) return undefined;
  const keys: string[] = [];
  let depth = 0;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end < 0) return undefined;
      if (depth === 1 && text.charCodeAt(skipSpace(text, end + 1)) === COLON) {
        try {
          keys.push(JSON.parse(text.slice(i, end + 1)) as string);
        } catch {
          return undefined;
        }
      }
      i = end;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
    } else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) {
      return keys;
    }
  }
  return undefined;
}
