// What Microsoft's Conversions API gets of the user: `em` and `ph` SHA-256 hashed (phone in
// E.164 with the `+`, as the guide's example hashes +14255551234), and `externalId` hashed
// too, since the guide asks for an anonymised user id and never a real one. The e-mail
// gets Microsoft's extra steps (dots and +alias out of the local part) in email-hash.ts.
import type { IdentifierSpec } from 'tracklane/sdk';

export const MICROSOFT_ADS_IDENTIFIERS: IdentifierSpec = {
  table: {
    'userData.em': { from: 'email', normalise: 'email', hash: true },
    'userData.ph': { from: 'phone', normalise: 'phone', hash: true },
    'userData.externalId': { from: ['external_id', 'id'], normalise: 'externalId', hash: true },
  },
  forms: { email: { removeSpaces: true }, phone: 'e164' },
};
