// Street normalisation (one form; GA4 sends it as `address.sha256_street`).
import { baseText, nonEmpty, withoutPunctuation } from './text.ts';

/**
 * Lowercase, remove symbols and punctuation, collapse spaces, trim. House numbers stay.
 * @example normaliseStreet('Str. Lungă nr. 12') // 'str lungă nr 12'
 */
export function normaliseStreet(raw: string): string | null {
  return nonEmpty(withoutPunctuation(baseText(raw)));
}
