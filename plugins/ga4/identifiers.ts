// What GA4 sends of the user and in which normal form (Measurement Protocol user-provided
// data): user_id in plain text (no e-mail, it must carry no PII) and user_data.* with
// e-mail, phone, names and street hashed, city, region, postal code and country plain.
import type { IdentifierSpec } from 'tracklane/sdk';

/** Google's normal forms, shared by GA4 and Google Ads (each plugin keeps its own copy). */
export const GOOGLE_FORMS = {
  email: { removeSpaces: true, dropGmailDots: true },
  phone: 'e164',
  name: 'letters',
  city: 'letters',
  region: 'letters',
  postalCode: 'no-dots',
  country: 'upper',
  externalId: { refuseEmail: true },
} as const satisfies IdentifierSpec['forms'];

export const GA4_IDENTIFIERS: IdentifierSpec = {
  table: {
    'user_id': { from: ['external_id', 'id'], normalise: 'externalId', hash: false },
    'user_data.sha256_email_address': { from: 'email', normalise: 'email', hash: true, max: 3 },
    'user_data.sha256_phone_number': { from: 'phone', normalise: 'phone', hash: true, max: 3 },
    'user_data.address.sha256_first_name': { from: 'first_name', normalise: 'name', hash: true },
    'user_data.address.sha256_last_name': { from: 'last_name', normalise: 'name', hash: true },
    'user_data.address.sha256_street': { from: 'street', normalise: 'street', hash: true },
    'user_data.address.city': { from: 'city', normalise: 'city', hash: false },
    'user_data.address.region': { from: 'region', normalise: 'region', hash: false },
    'user_data.address.postal_code': { from: 'postal_code', normalise: 'postalCode', hash: false },
    'user_data.address.country': { from: 'country', normalise: 'country', hash: false },
  },
  forms: GOOGLE_FORMS,
};
