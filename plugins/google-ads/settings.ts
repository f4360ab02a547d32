// Google Ads destination settings (docs/api.md, "Destinations"):
// the ajv draft-07 schema, and the type derived from it.
import { ACCESS_TOKEN_OR_OAUTH, OAUTH_SETTINGS_PROPERTIES, COMMON_SETTINGS_PROPERTIES, type SettingsOf } from 'tracklane/sdk';

export const DEFAULT_ENDPOINT = 'https://googleads.googleapis.com';
/** v21 and older were sunset by August 2026; v22–v26 answer. Operators can pin another. */
export const DEFAULT_API_VERSION = 'v26';
/** Google's OAuth 2.0 token endpoint (refresh_token grant). */
export const TOKEN_URL = 'https://oauth2.googleapis.com/token';

const CUSTOMER_ID = '^[0-9]{3}-?[0-9]{3}-?[0-9]{4}$';
const digitsOrInteger = (pattern: string) => ({
  anyOf: [{ type: 'string', pattern }, { type: 'integer', minimum: 1 }],
});

export const settingsSchema = {
  type: 'object',
  required: ['customer_id', 'developer_token', 'conversion_actions'],
  additionalProperties: false,
  ...ACCESS_TOKEN_OR_OAUTH,
  properties: {
    customer_id: { type: 'string', pattern: CUSTOMER_ID, description: 'the advertiser account, 10 digits; dashes (123-456-7890) are allowed and stripped' },
    developer_token: { type: 'string', minLength: 1, description: 'Google Ads API developer token (secret)' },
    // access_token, or the OAuth keys below (the loader requires one form or the other).
    access_token: { type: 'string', minLength: 1, description: 'OAuth2 access token with the adwords scope (secret); without the OAuth keys, refreshing it is up to the operator' },
    ...OAUTH_SETTINGS_PROPERTIES,
    conversion_actions: {
      type: 'object',
      minProperties: 1,
      propertyNames: { type: 'string', minLength: 1 },
      additionalProperties: digitsOrInteger('^([0-9]+|customers/[0-9]+/conversionActions/[0-9]+)$'),
      description: 'event name → conversion action id (digits, or the full customers/…/conversionActions/… name)',
    },
    login_customer_id: { type: 'string', pattern: CUSTOMER_ID, description: 'manager (MCC) account the token acts through; sent as login-customer-id' },
    merchant_id: { ...digitsOrInteger('^[0-9]+$'), description: 'Merchant Center id; when set, checkout_completed and cart_viewed carry cartData' },
    feed_country_code: { type: 'string', pattern: '^[A-Za-z]{2}$', description: 'cartData.feedCountryCode (ISO 3166-1 alpha-2)' },
    feed_language_code: { type: 'string', pattern: '^[A-Za-z]{2}$', description: 'cartData.feedLanguageCode (ISO 639-1)' },
    api_version: { type: 'string', pattern: '^v[0-9]+$', description: 'REST version segment, e.g. v26' },
    validate_only: { type: 'boolean', description: 'sends validateOnly: true; Google checks the request and records nothing' },
    upload_view_conversions: { type: 'boolean', description: 'upload the view and cart events conversion_actions maps (default false: only purchases and lead stages; a view counted on a primary action inflates conversions)' },
    // test_event_code (common): test mode, the same as validate_only (Google has no test code to send).
    ...COMMON_SETTINGS_PROPERTIES,
  },
} as const;

/** The settings as plugin code reads them: derived from the schema above, so the two cannot drift apart. */
export type GoogleAdsSettings = SettingsOf<typeof settingsSchema>;
