// Region / state normalisation in the form a destination asks for: plain lower-cased text,
// letters only, or the two-letter ANSI code for US states.
import type { RegionForm } from './forms.ts';
import { alphanumeric, baseText, lettersAndSpaces, nonEmpty } from './text.ts';
import type { NormaliseContext } from './types.ts';
import { US_STATE_CODES } from './us-states.ts';

/**
 * - `trim` (default): lowercase, trim
 * - `letters`: lowercase, remove digits and symbols, trim
 * - `us-state-code`: US (user's country `us`, or no country known): a state name becomes its
 *   code; otherwise lowercase with no punctuation and no spaces
 *
 * @example normaliseRegion('California', 'us-state-code', { country: 'us' }) // 'ca'
 * @example normaliseRegion('Cluj', 'us-state-code', { country: 'ro' })        // 'cluj'
 */
export function normaliseRegion(
  raw: string,
  form: RegionForm = 'trim',
  ctx: Pick<NormaliseContext, 'country'> = {},
): string | null {
  const s = baseText(raw);
  switch (form) {
    case 'letters': return nonEmpty(lettersAndSpaces(s));
    case 'trim': return nonEmpty(s);
    case 'us-state-code': {
      const squashed = alphanumeric(s);
      const usCode = ctx.country === undefined || ctx.country === 'us' ? US_STATE_CODES[squashed] : undefined;
      return nonEmpty(usCode ?? squashed);
    }
  }
}
