// What Meta's Conversions API gets of the user (customer information parameters): every
// field SHA-256 hashed under its user_data name, in Meta's normal forms — phone digits
// only, names without punctuation, city squashed, US states as codes, US ZIPs cut to five
// digits, external id lower-cased as Meta's own SDK does.
import { hashedContactTable, type IdentifierSpec } from 'tracklane/sdk';

export const META_IDENTIFIERS: IdentifierSpec = {
  table: hashedContactTable('user_data', 5),
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
