// The spec lets stock_status be a boolean, a number or a word in English or Romanian; the
// pipeline only wants "in stock or not", so it is parsed to a boolean here, once.

/** The documented out-of-stock words, lower-case, without diacritics. */
const OUT_OF_STOCK_WORDS: ReadonlySet<string> = new Set([
  '0',
  'no',
  'nu',
  'false',
  'out of stock',
  'sold out',
  'unavailable',
  'indisponibil',
  'fara stoc',
  'stoc epuizat',
]);
const COMBINING_MARKS = /\p{M}/gu;
const WHITESPACE_RUN = /\s+/g;

/**
 * Parses a payload's stock_status into true (in stock) or false (out of stock).
 * Absent → true; boolean as is; number > 0 → true; a string is out of stock when it is one
 * of the documented words, compared case-insensitively after trimming. Beyond the documented list,
 * inner whitespace runs and diacritics are folded so `Fără  stoc` counts like `fara stoc`.
 * @example parseStockStatus('Sold Out') // false
 */
export function parseStockStatus(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value > 0;
  if (typeof value !== 'string') return true;
  const word = value.trim().toLowerCase();
  if (OUT_OF_STOCK_WORDS.has(word)) return false;
  const folded = word.normalize('NFD').replace(COMBINING_MARKS, '').replace(WHITESPACE_RUN, ' ');
  return !OUT_OF_STOCK_WORDS.has(folded);
}
