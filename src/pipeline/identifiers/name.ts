// First and last name normalisation. UTF-8 letters of any
// script are kept as they are (ß stays ß, ș stays ș); only case and punctuation change.
import { baseText, lettersAndSpaces, nonEmpty, withoutPunctuation } from './text.ts';
import type { Platform } from './types.ts';

/**
 * - google: lowercase, remove digits and symbols, collapse spaces, trim (GA4 rule, which
 *   also covers the Ads proto's "extra spaces" and "no punctuation" wording)
 * - meta: lowercase, remove punctuation, collapse spaces, trim
 * - tiktok: trim, lowercase
 *
 * @example normaliseName(' Ștefan-Țuțea ', 'google') // 'ștefanțuțea'
 * @example normaliseName("O'Brien 2nd", 'meta')      // 'obrien 2nd'
 */
export function normaliseName(raw: string, platform: Platform): string | null {
  const s = baseText(raw);
  switch (platform) {
    case 'google': return nonEmpty(lettersAndSpaces(s));
    case 'meta': return nonEmpty(withoutPunctuation(s));
    case 'tiktok': return nonEmpty(s);
  }
}
