// Settings of the tiktok destination: the draft-07 schema `destinations add --config` is
// checked against (docs/api.md, "Destinations"), and the type derived from it.
import { COMMON_SETTINGS_PROPERTIES, type SettingsOf } from 'tracklane/sdk';

export const DEFAULT_ENDPOINT = 'https://business-api.tiktok.com';

export const settingsSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['pixel_code', 'access_token'],
  additionalProperties: false,
  properties: {
    pixel_code: { type: 'string', pattern: '^[A-Za-z0-9]{1,64}$', description: 'TikTok pixel code' },
    access_token: { type: 'string', minLength: 1, pattern: '^\\S+$', description: 'Events API access token' },
    ...COMMON_SETTINGS_PROPERTIES,
    crm_event_set_id: { type: 'string', pattern: '^[A-Za-z0-9]{1,64}$' },
    lead_event_source: { type: 'string', minLength: 1, maxLength: 100 },
  },
} as const;

/** The settings as plugin code reads them: derived from the schema above, so the two cannot drift apart. */
export type TiktokSettings = SettingsOf<typeof settingsSchema>;
