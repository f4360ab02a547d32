// What LinkedIn's Conversions API gets of the user and the browser: the e-mail SHA-256
// hashed (trimmed, lower-cased) for SHA256_EMAIL; first and last name (lower-cased, as in
// LinkedIn's example) and the country (ISO alpha-2, upper case) in plain text for userInfo;
// the customer's own id for externalIds; and the li_fat_id first-party ad tracking id.
import { cleanClickId, type AttributionSpec, type IdentifierSpec } from 'tracklane/sdk';

/** Keys of item.identifiers that build-requests.ts reads. */
export const ID_KEYS = {
  email: 'sha256Email',
  firstName: 'userInfo.firstName',
  lastName: 'userInfo.lastName',
  countryCode: 'userInfo.countryCode',
  externalId: 'externalId',
} as const;

export const LINKEDIN_IDENTIFIERS: IdentifierSpec = {
  table: {
    [ID_KEYS.email]: { from: 'email', normalise: 'email', hash: true },
    [ID_KEYS.firstName]: { from: 'first_name', normalise: 'name', hash: false },
    [ID_KEYS.lastName]: { from: 'last_name', normalise: 'name', hash: false },
    [ID_KEYS.countryCode]: { from: 'country', normalise: 'country', hash: false },
    // Sent in plain text, so an id that is really an e-mail address is refused.
    [ID_KEYS.externalId]: { from: ['external_id', 'id'], normalise: 'externalId', hash: false },
  },
  forms: { email: {}, name: 'trim', country: 'upper', externalId: { refuseEmail: true } },
};

/**
 * The li_fat_id LinkedIn appends to ad click URLs when enhanced conversion tracking is on,
 * kept exactly: the landing URL's parameter (the click itself), else the first-party
 * cookie the Insight Tag stored it in.
 */
export const LINKEDIN_ATTRIBUTION: AttributionSpec = {
  ids: { li_fat_id: [{ param: 'li_fat_id' }, { cookie: 'li_fat_id', parse: (v) => cleanClickId(v) }] },
};
