// What Snap's Conversions API gets of the user and the browser: every customer field SHA-256
// hashed under its user_data name in Snap's normal forms (e-mail trimmed and lower-cased,
// phone digits with the country code, names lower-cased without punctuation, city squashed,
// US states as two-letter codes, US ZIPs to five digits, country as a lower-case code), and
// the click id (`ScCid` / `sc_click_id` landing parameter) and the Snap Pixel cookie `_scid`.
import { cleanClickId, type AttributionSpec, hashedContactTable, type IdentifierSpec } from 'tracklane/sdk';

export const SNAPCHAT_IDENTIFIERS: IdentifierSpec = {
  table: hashedContactTable('user_data', 5),
  forms: {
    email: {},
    phone: 'digits',
    name: 'no-punctuation',
    city: 'alphanumeric',
    region: 'us-state-code',
    postalCode: 'us-zip5',
    country: 'lower',
    externalId: {},
  },
};

/** `_scid` holds the Snap Pixel's browser id as the pixel stored it; kept exactly. */
export const parseScid = (value: string): string | undefined => cleanClickId(value);

export const SNAPCHAT_ATTRIBUTION: AttributionSpec = {
  ids: {
    sc_click_id: [{ param: 'ScCid' }, { param: 'sc_click_id' }],
    sc_cookie1: [{ cookie: '_scid', parse: parseScid }],
  },
};
