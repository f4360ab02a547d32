// First and last name normalisation. UTF-8 letters of any script are kept as they are
// (ß stays ß, ș stays ș); only case, punctuation and spaces change, as the form says.
import type { NameForm } from './forms.ts';
import { baseText, lettersAndSpaces, nonEmpty, withoutPunctuation } from './text.ts';

/**
 * - `trim` (default): lowercase, trim
 * - `letters`: also remove digits and symbols, collapse spaces
 * - `no-punctuation`: also remove punctuation, collapse spaces
 *
 * @example normaliseName(' Ștefan-Țuțea ', 'letters')     // 'ștefanțuțea'
 * @example normaliseName("O'Brien 2nd", 'no-punctuation') // 'obrien 2nd'
 */
export function normaliseName(raw: string, form: NameForm = 'trim'): string | null {
  const s = baseText(raw);
  switch (form) {
    case 'letters': return nonEmpty(lettersAndSpaces(s));
    case 'no-punctuation': return nonEmpty(withoutPunctuation(s));
    case 'trim': return nonEmpty(s);
  }
}
