// Settings of the microsoft-ads destination, written once: the draft-07 schema operators'
// `destinations add --config` is checked against, and the type derived from it.
import { COMMON_SETTINGS_PROPERTIES, type SettingsOf } from 'tracklane/sdk';

export const DEFAULT_ENDPOINT = 'https://capi.uet.microsoft.com';

export const settingsSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['tag_id', 'access_token'],
  additionalProperties: false,
  properties: {
    tag_id: { type: 'string', pattern: '^[0-9]{1,20}$', description: 'UET tag id (digits), the tag the conversion goals use' },
    access_token: { type: 'string', minLength: 1, pattern: '^\\S+$', description: 'Conversions API token of the UET tag, sent as a bearer token (secret)' },
    ...COMMON_SETTINGS_PROPERTIES,
    // The Conversions API has no test mode or test code: any string is accepted and ignored.
    test_event_code: { type: 'string' },
  },
} as const;

export type MicrosoftAdsSettings = SettingsOf<typeof settingsSchema>;
