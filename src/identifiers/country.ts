// Country → ISO 3166-1 alpha-2. Accepts alpha-2, alpha-3 and numeric codes, and names in
// every language i18n-iso-countries ships (English first), plus a few everyday variants.
import countries from 'i18n-iso-countries';
import type { CountryForm } from './forms.ts';
import { nonEmpty } from './text.ts';

/** Everyday names the library does not list; keys are in `nameKey` form. */
const VARIANTS: Readonly<Record<string, string>> = {
  america: 'US', unitedstatesamerica: 'US', england: 'GB', scotland: 'GB', wales: 'GB',
  northernireland: 'GB', britain: 'GB', uk: 'GB', holland: 'NL', laos: 'LA', moldova: 'MD',
  vatican: 'VA', vaticancity: 'VA', swaziland: 'SZ', burma: 'MM', caboverde: 'CV',
  micronesia: 'FM', brunei: 'BN', macedonia: 'MK', syria: 'SY', korea: 'KR', uae: 'AE',
  emirates: 'AE', czech: 'CZ', bosnia: 'BA', palestine: 'PS',
};

let nameIndex: Map<string, string> | undefined;

/**
 * Resolves a country code or name to lowercase alpha-2, or null.
 * @example resolveCountry('Romania')      // 'ro'
 * @example resolveCountry('Deutschland')  // 'de'
 * @example resolveCountry('USA')          // 'us'
 */
export function resolveCountry(raw: string): string | null {
  const s = raw.normalize('NFC').trim();
  if (s === '') return null;
  if (/^[a-z]{2}$/i.test(s) && countries.isValid(s.toUpperCase())) return s.toLowerCase();
  if (/^[a-z]{3}$/i.test(s)) {
    const a2 = countries.alpha3ToAlpha2(s.toUpperCase());
    if (a2 !== undefined) return a2.toLowerCase();
  }
  if (/^\d{1,3}$/.test(s)) return countries.numericToAlpha2(s)?.toLowerCase() ?? null;
  nameIndex ??= buildNameIndex();
  return nameIndex.get(nameKey(s))?.toLowerCase() ?? null;
}

/**
 * The alpha-2 code in the case the destination's form asks for (default lowercase).
 * @example normaliseCountry('united states', 'upper') // 'US'
 * @example normaliseCountry('united states')          // 'us'
 */
export function normaliseCountry(raw: string, form: CountryForm = 'lower'): string | null {
  const code = resolveCountry(raw);
  if (code === null) return null;
  return nonEmpty(form === 'upper' ? code.toUpperCase() : code);
}

/** Case, accents, punctuation, spaces and a leading "the" do not matter. */
function nameKey(s: string): string {
  return s
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/^the\s+/u, '')
    .replace(/[^\p{L}\p{N}]/gu, '');
}

function buildNameIndex(): Map<string, string> {
  const index = new Map<string, string>();
  const add = (name: string, code: string) => {
    const key = nameKey(name);
    if (key !== '' && !index.has(key)) index.set(key, code);
  };
  const addLanguage = (lang: string) => {
    for (const [code, names] of Object.entries(countries.getNames(lang, { select: 'all' }))) {
      for (const name of names) add(name, code);
    }
  };
  addLanguage('en');
  for (const [name, code] of Object.entries(VARIANTS)) add(name, code);
  for (const lang of countries.langs()) if (lang !== 'en') addLanguage(lang);
  return index;
}
