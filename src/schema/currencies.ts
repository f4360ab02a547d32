// ISO 4217 currency codes from the `currency-codes` package (the published list, not a
// hand-kept copy). Looked up in a Set built once, because every event carries a currency.
import { codes } from 'currency-codes';

const ISO_4217: ReadonlySet<string> = new Set(codes());

/**
 * True when `code` is an ISO 4217 alphabetic code. Case-insensitive (`eur` is accepted and
 * normalised to `EUR` later), but exactly three letters: no padding, no symbols.
 * @example isCurrencyCode('RON') // true
 */
export function isCurrencyCode(code: string): boolean {
  return code.length === 3 && ISO_4217.has(code.toUpperCase());
}
