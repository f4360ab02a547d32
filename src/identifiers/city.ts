// City normalisation: lower-cased NFC, then letters and digits only (default) or letters
// and inner spaces, as the destination's form says.
import type { CityForm } from './forms.ts';
import { alphanumeric, baseText, lettersAndSpaces, nonEmpty } from './text.ts';

/**
 * @example normaliseCity('Cluj-Napoca', 'letters') // 'clujnapoca'
 * @example normaliseCity('New York', 'letters')    // 'new york'
 * @example normaliseCity('New York')               // 'newyork'
 */
export function normaliseCity(raw: string, form: CityForm = 'alphanumeric'): string | null {
  const s = baseText(raw);
  return nonEmpty(form === 'letters' ? lettersAndSpaces(s) : alphanumeric(s));
}
