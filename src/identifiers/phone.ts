// Phone normalisation to E.164 with libphonenumber-js; a destination's form keeps the `+`
// (default) or asks for digits only.
import { parsePhoneNumberFromString, type CountryCode, type PhoneNumber } from 'libphonenumber-js';
import type { PhoneForm } from './forms.ts';
import type { NormaliseContext } from './types.ts';

/**
 * Parses a phone number and returns its E.164 form (`+40722123456`), or null when no
 * reading of it is a possible number. National numbers are read with the user's country
 * first, then the account default. A `00` international prefix and a bare run of digits
 * that already starts with a country code are also tried, so `0044 20 7946 0958` works
 * whatever the default country is. A valid reading beats one that is merely possible.
 *
 * @example toE164('0722 123 456', { defaultCountry: 'RO' }) // '+40722123456'
 */
export function toE164(raw: string, ctx: Pick<NormaliseContext, 'defaultCountry' | 'country'> = {}): string | null {
  const text = raw.normalize('NFKC').trim();
  if (text === '') return null;
  const countries = [ctx.country, ctx.defaultCountry]
    .filter((c): c is string => typeof c === 'string' && /^[a-z]{2}$/i.test(c))
    .map((c) => c.toUpperCase() as CountryCode);
  const candidates: Array<() => PhoneNumber | undefined> = [];
  if (text.startsWith('+') || countries.length === 0) candidates.push(() => parse(text));
  for (const c of countries) candidates.push(() => parse(text, c));
  const digits = text.replace(/\D/g, '');
  if (/^\s*00/.test(text)) candidates.push(() => parse(`+${digits.slice(2)}`));
  else if (!text.startsWith('+') && digits.length >= 8) candidates.push(() => parse(`+${digits}`));

  let possible: PhoneNumber | undefined;
  for (const candidate of candidates) {
    const n = candidate();
    if (n === undefined) continue;
    if (n.isValid()) return n.number;
    if (possible === undefined && n.isPossible()) possible = n;
  }
  return possible?.number ?? null;
}

/**
 * Phone in the destination's form before hashing.
 * @example normalisePhone('+40 (722) 123-456', 'digits') // '40722123456'
 * @example normalisePhone('+40 (722) 123-456')           // '+40722123456'
 */
export function normalisePhone(
  raw: string,
  form: PhoneForm = 'e164',
  ctx: Pick<NormaliseContext, 'defaultCountry' | 'country' | 'shared'> = {},
): string | null {
  // Parsing is the expensive part and the same for every form: once per batch.
  const key = `e164\u0000${ctx.country ?? ''}\u0000${ctx.defaultCountry ?? ''}\u0000${raw}`;
  let e164 = ctx.shared?.get(key);
  if (e164 === undefined) {
    e164 = toE164(raw, ctx);
    ctx.shared?.set(key, e164);
  }
  if (e164 === null) return null;
  return form === 'digits' ? e164.slice(1) : e164;
}

function parse(text: string, country?: CountryCode): PhoneNumber | undefined {
  try {
    return parsePhoneNumberFromString(text, country);
  } catch {
    return undefined;
  }
}
