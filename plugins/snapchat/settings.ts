// Settings of the snapchat destination, written once: the draft-07 schema operators'
// `destinations add --config` is checked against, and the type derived from it.
import { COMMON_SETTINGS_PROPERTIES, type SettingsOf } from 'tracklane/sdk';

export const DEFAULT_ENDPOINT = 'https://tr.snapchat.com';

export const settingsSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['pixel_id', 'access_token'],
  additionalProperties: false,
  properties: {
    pixel_id: { type: 'string', pattern: '^[0-9A-Za-z-]{1,64}$', description: 'Snap Pixel id (a UUID), for web and offline events' },
    access_token: { type: 'string', minLength: 1, pattern: '^\\S+$', description: 'Conversions API token, sent as the access_token query parameter (secret)' },
    ...COMMON_SETTINGS_PROPERTIES,
    test_event_code: {
      type: 'string', minLength: 1,
      description: 'any value sends to /events/validate: Snap checks the events and records none in production (Snap has no test code to send)',
    },
  },
} as const;

export type SnapchatSettings = SettingsOf<typeof settingsSchema>;
