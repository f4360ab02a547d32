// Street normalisation: only Google takes a street (GA4 `address.sha256_street`).
import { baseText, nonEmpty, withoutPunctuation } from './text.ts';
import type { Platform } from './types.ts';

/**
 * Lowercase, remove symbols and punctuation, collapse spaces, trim. House numbers stay.
 * @example normaliseStreet('Str. Lungă nr. 12', 'google') // 'str lungă nr 12'
 */
export function normaliseStreet(raw: string, _platform: Platform): string | null {
  return nonEmpty(withoutPunctuation(baseText(raw)));
}
