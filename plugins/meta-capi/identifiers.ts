// What Meta's Conversions API gets of the user (customer information parameters): every
// field SHA-256 hashed under its user_data name, in Meta's normal forms — phone digits
// only, names without punctuation, city squashed, US states as codes, US ZIPs cut to five
// digits, external id lower-cased as Meta's own SDK does.
import type { IdentifierSpec } from '../../src/pipeline/identifiers/index.ts';

export const META_IDENTIFIERS: IdentifierSpec = {
  table: {
    'user_data.em': { from: 'email', normalise: 'email', hash: true, max: 5 },
    'user_data.ph': { from: 'phone', normalise: 'phone', hash: true, max: 5 },
    'user_data.fn': { from: 'first_name', normalise: 'name', hash: true },
    'user_data.ln': { from: 'last_name', normalise: 'name', hash: true },
    'user_data.ct': { from: 'city', normalise: 'city', hash: true },
    'user_data.st': { from: 'region', normalise: 'region', hash: true },
    'user_data.zp': { from: 'postal_code', normalise: 'postalCode', hash: true },
    'user_data.country': { from: 'country', normalise: 'country', hash: true },
    'user_data.external_id': { from: ['external_id', 'id'], normalise: 'externalId', hash: true },
  },
  forms: {
    phone: 'digits',
    name: 'no-punctuation',
    city: 'alphanumeric',
    region: 'us-state-code',
    postalCode: 'us-zip5',
    country: 'lower',
    externalId: { lowerCase: true },
  },
};
