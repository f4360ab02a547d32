// Settings of the linkedin destination, written once: the draft-07 schema operators'
// `destinations add --config` is checked against, and the type derived from it.
import { ACCESS_TOKEN_OR_OAUTH, OAUTH_SETTINGS_PROPERTIES, COMMON_SETTINGS_PROPERTIES, type SettingsOf } from 'tracklane/sdk';

export const DEFAULT_ENDPOINT = 'https://api.linkedin.com';
/**
 * LinkedIn-Version sent when `api_version` is unset. LinkedIn keeps a monthly version for
 * about a year (202511 is sunset on November 16, 2026); pin a newer one with `api_version`.
 */
export const DEFAULT_API_VERSION = '202603';
/** LinkedIn's OAuth 2.0 token endpoint (programmatic refresh tokens). */
export const TOKEN_URL = 'https://www.linkedin.com/oauth/v2/accessToken';

/** A conversion rule id as Campaign Manager shows it, or its full URN. */
export const CONVERSION_RULE_ID = '^([0-9]{1,20}|urn:lla:llaPartnerConversion:[0-9]{1,20})$';

export const settingsSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['conversion_rules'],
  additionalProperties: false,
  ...ACCESS_TOKEN_OR_OAUTH,
  properties: {
    // access_token, or the OAuth keys below (the loader requires one form or the other).
    access_token: { type: 'string', minLength: 1, pattern: '^\\S+$', description: 'OAuth 2.0 access token with rw_conversions, sent as a bearer token (secret)' },
    ...OAUTH_SETTINGS_PROPERTIES,
    conversion_rules: {
      type: 'object',
      minProperties: 1,
      propertyNames: { type: 'string', minLength: 1 },
      additionalProperties: { anyOf: [{ type: 'string', pattern: CONVERSION_RULE_ID }, { type: 'integer', minimum: 1 }] },
      description: 'event name → conversion rule id (digits, or urn:lla:llaPartnerConversion:<id>); an event without one is not sent',
    },
    api_version: { type: 'string', pattern: '^20[0-9]{2}(0[1-9]|1[0-2])$', description: `LinkedIn-Version header, YYYYMM (default ${DEFAULT_API_VERSION})` },
    ...COMMON_SETTINGS_PROPERTIES,
    // No test mode on this platform (noTestMode in index.ts): refused, so a test is never recorded as a real conversion.
    test_event_code: { not: {}, description: 'refused: this platform has no test mode' },
  },
} as const;

export type LinkedInSettings = SettingsOf<typeof settingsSchema>;
