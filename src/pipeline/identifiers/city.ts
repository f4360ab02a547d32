// City normalisation. Google and TikTok get it in plain text, Meta hashed.
import { alphanumeric, baseText, lettersAndSpaces, nonEmpty } from './text.ts';
import type { Platform } from './types.ts';

/**
 * - google: lowercase, remove digits and symbols, trim (spaces inside are kept)
 * - meta: lowercase, no punctuation, no spaces
 * - tiktok: lowercase alphanumeric
 *
 * @example normaliseCity('Cluj-Napoca', 'google') // 'clujnapoca'
 * @example normaliseCity('New York', 'google')    // 'new york'
 * @example normaliseCity('New York', 'meta')      // 'newyork'
 */
export function normaliseCity(raw: string, platform: Platform): string | null {
  const s = baseText(raw);
  return nonEmpty(platform === 'google' ? lettersAndSpaces(s) : alphanumeric(s));
}
