// Region / state normalisation. Meta hashes it and wants the
// two-letter ANSI code for US states; Google and TikTok take it in plain text.
import { alphanumeric, baseText, lettersAndSpaces, nonEmpty } from './text.ts';
import type { NormaliseContext, Platform } from './types.ts';
import { US_STATE_CODES } from './us-states.ts';

/**
 * - google: lowercase, remove digits and symbols, trim
 * - meta: US (user's country `us`, or no country known): a state name becomes its code;
 *   otherwise lowercase with no punctuation and no spaces
 * - tiktok: lowercase, trim
 *
 * @example normaliseRegion('California', 'meta', { country: 'us' }) // 'ca'
 * @example normaliseRegion('Cluj', 'meta', { country: 'ro' })        // 'cluj'
 */
export function normaliseRegion(
  raw: string,
  platform: Platform,
  ctx: Pick<NormaliseContext, 'country'> = {},
): string | null {
  const s = baseText(raw);
  switch (platform) {
    case 'google': return nonEmpty(lettersAndSpaces(s));
    case 'tiktok': return nonEmpty(s);
    case 'meta': {
      const squashed = alphanumeric(s);
      const usCode = ctx.country === undefined || ctx.country === 'us' ? US_STATE_CODES[squashed] : undefined;
      return nonEmpty(usCode ?? squashed);
    }
  }
}
