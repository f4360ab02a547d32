// Settings of the pinterest destination, written once: the draft-07 schema operators'
// `destinations add --config` is checked against, and the type derived from it.
import { COMMON_SETTINGS_PROPERTIES, type SettingsOf } from 'tracklane/sdk';

export const DEFAULT_ENDPOINT = 'https://api.pinterest.com';

export const settingsSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['ad_account_id', 'access_token'],
  additionalProperties: false,
  properties: {
    ad_account_id: { type: 'string', pattern: '^[0-9]{1,32}$', description: 'Pinterest ad account id (digits)' },
    access_token: { type: 'string', minLength: 1, pattern: '^\\S+$', description: 'conversion access token, sent as a bearer token (secret)' },
    test: { type: 'boolean', description: 'send with ?test=true: Pinterest checks the events and records none' },
    // test_event_code (common): test mode too, the same ?test=true (Pinterest has no test code to send).
    ...COMMON_SETTINGS_PROPERTIES,
  },
} as const;

export type PinterestSettings = SettingsOf<typeof settingsSchema>;
