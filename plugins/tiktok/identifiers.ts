// What TikTok's Events API gets of the user: e-mail, phone (E.164 with its `+`), external
// id, names and ZIP hashed; city, state and country in plain text. TikTok's forms are the
// normalisers' defaults (trimmed and lower-cased), written out here to be read at a glance.
import type { IdentifierSpec } from 'tracklane/sdk';

export const TIKTOK_IDENTIFIERS: IdentifierSpec = {
  table: {
    'user.email': { from: 'email', normalise: 'email', hash: true, max: 5 },
    'user.phone': { from: 'phone', normalise: 'phone', hash: true, max: 5 },
    'user.external_id': { from: ['external_id', 'id'], normalise: 'externalId', hash: true },
    'user.first_name': { from: 'first_name', normalise: 'name', hash: true },
    'user.last_name': { from: 'last_name', normalise: 'name', hash: true },
    'user.city': { from: 'city', normalise: 'city', hash: false },
    'user.state': { from: 'region', normalise: 'region', hash: false },
    'user.zip_code': { from: 'postal_code', normalise: 'postalCode', hash: true },
    'user.country': { from: 'country', normalise: 'country', hash: false },
  },
  forms: {
    email: {},
    phone: 'e164',
    name: 'trim',
    city: 'alphanumeric',
    region: 'trim',
    postalCode: 'no-spaces',
    country: 'lower',
    externalId: {},
  },
};
