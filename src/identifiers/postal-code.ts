// Postal code normalisation in the form a destination asks for: as written without dots,
// lower-cased without spaces, or US ZIPs cut to five digits.
import type { PostalCodeForm } from './forms.ts';
import { nonEmpty } from './text.ts';
import type { NormaliseContext } from './types.ts';

const ZIP_PLUS_4 = /^\d{5}-\d{4}$/;

/**
 * - `no-spaces` (default): lowercase, no spaces
 * - `no-dots`: remove `.` and `~`, trim (case and inner spaces kept)
 * - `us-zip5`: lowercase, no spaces or dashes; for the US the first 5 digits. The US is the
 *   user's country, or, when no country is known, a value shaped like ZIP+4 (`94103-1234`).
 *
 * @example normalisePostalCode('94103-1234', 'us-zip5', { country: 'us' }) // '94103'
 * @example normalisePostalCode('SW1A 1AA', 'us-zip5', { country: 'gb' })   // 'sw1a1aa'
 */
export function normalisePostalCode(
  raw: string,
  form: PostalCodeForm = 'no-spaces',
  ctx: Pick<NormaliseContext, 'country'> = {},
): string | null {
  const s = raw.normalize('NFKC').trim();
  switch (form) {
    case 'no-dots': return nonEmpty(s.replace(/[.~]/g, '').trim());
    case 'no-spaces': return nonEmpty(s.toLowerCase().replace(/\s+/gu, ''));
    case 'us-zip5': {
      const isUs = ctx.country === 'us' || (ctx.country === undefined && ZIP_PLUS_4.test(s));
      if (isUs) return nonEmpty(s.replace(/\D/g, '').slice(0, 5));
      return nonEmpty(s.toLowerCase().replace(/[\s-]+/gu, ''));
    }
  }
}
