// What Pinterest's Conversions API gets of the user and the browser: every customer field
// SHA-256 hashed under its user_data name (e-mail trimmed and lower-cased, phone digits
// only with the country code, names lower-cased, city squashed, US states as two-letter
// codes, US ZIPs cut to five digits, country as a lower-case code), and the `epik` click id
// from the `_epik` cookie or the `epik` landing parameter.
import { cleanClickId, type AttributionSpec, hashedContactTable, type IdentifierSpec } from 'tracklane/sdk';

export const PINTEREST_IDENTIFIERS: IdentifierSpec = {
  table: hashedContactTable('user_data', 5),
  forms: {
    email: {},
    phone: 'digits',
    name: 'trim',
    city: 'alphanumeric',
    region: 'us-state-code',
    postalCode: 'us-zip5',
    country: 'lower',
    externalId: {},
  },
};

/** The `_epik` cookie holds the click id as Pinterest's tag stored it; kept exactly. */
export const parseEpik = (value: string): string | undefined => cleanClickId(value);

export const PINTEREST_ATTRIBUTION: AttributionSpec = {
  ids: { epik: [{ cookie: '_epik', parse: parseEpik }, { param: 'epik' }] },
};
