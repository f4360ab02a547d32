// Settings of the reddit destination, written once: the draft-07 schema operators'
// `destinations add --config` is checked against, and the type derived from it.
import { COMMON_SETTINGS_PROPERTIES, type SettingsOf } from 'tracklane/sdk';

export const DEFAULT_ENDPOINT = 'https://ads-api.reddit.com';

export const settingsSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['pixel_id', 'access_token'],
  additionalProperties: false,
  properties: {
    pixel_id: { type: 'string', pattern: '^[A-Za-z0-9_]{1,64}$', description: 'Reddit Pixel ID from Events Manager (e.g. a2_abc123)' },
    access_token: { type: 'string', minLength: 1, pattern: '^\\S+$', description: 'conversion access token, sent as a bearer token (secret)' },
    ...COMMON_SETTINGS_PROPERTIES,
    // Reddit's test_id from Event Testing; v3 has no test_mode flag.
    test_event_code: { type: 'string', minLength: 1, maxLength: 256, description: 'the test_id shown in Event Testing: the events go to Event Testing' },
  },
} as const;

export type RedditSettings = SettingsOf<typeof settingsSchema>;
