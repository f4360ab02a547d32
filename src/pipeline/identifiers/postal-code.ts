// Postal code normalisation. Plain text for Google, hashed for
// Meta and TikTok; Meta keeps only the first five digits of a US ZIP.
import { nonEmpty } from './text.ts';
import type { NormaliseContext, Platform } from './types.ts';

const ZIP_PLUS_4 = /^\d{5}-\d{4}$/;

/**
 * - google: remove `.` and `~`, trim (case and inner spaces kept)
 * - meta: lowercase, no spaces or dashes; for the US the first 5 digits. The US is the
 *   user's country, or, when no country is known, a value shaped like ZIP+4 (`94103-1234`).
 * - tiktok: lowercase, no spaces
 *
 * @example normalisePostalCode('94103-1234', 'meta', { country: 'us' }) // '94103'
 * @example normalisePostalCode('SW1A 1AA', 'meta', { country: 'gb' })   // 'sw1a1aa'
 */
export function normalisePostalCode(
  raw: string,
  platform: Platform,
  ctx: Pick<NormaliseContext, 'country'> = {},
): string | null {
  const s = raw.normalize('NFKC').trim();
  switch (platform) {
    case 'google': return nonEmpty(s.replace(/[.~]/g, '').trim());
    case 'tiktok': return nonEmpty(s.toLowerCase().replace(/\s+/gu, ''));
    case 'meta': {
      const isUs = ctx.country === 'us' || (ctx.country === undefined && ZIP_PLUS_4.test(s));
      if (isUs) return nonEmpty(s.replace(/\D/g, '').slice(0, 5));
      return nonEmpty(s.toLowerCase().replace(/[\s-]+/gu, ''));
    }
  }
}
