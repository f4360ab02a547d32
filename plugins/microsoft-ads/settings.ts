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
    // No test mode on this platform (noTestMode in index.ts): refused, so a test is never recorded as a real conversion.
    test_event_code: { not: {}, description: 'refused: this platform has no test mode' },
  },
} as const;

export type MicrosoftAdsSettings = SettingsOf<typeof settingsSchema>;
