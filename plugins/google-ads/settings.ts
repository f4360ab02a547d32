// Google Ads destination settings (docs/api.md, "Destinations"):
// the type and its ajv draft-07 schema side by side.
import { COMMON_SETTINGS_PROPERTIES, type CommonSettings } from '../../src/destinations/settings-schema.ts';

export interface GoogleAdsSettings extends CommonSettings {
  /** The advertiser account, 10 digits; dashes (`123-456-7890`) are allowed and stripped. */
  customer_id: string;
  developer_token: string;
  /** OAuth2 access token with the `adwords` scope; refreshing it is up to the operator. */
  access_token: string;
  /** Event name → conversion action id (digits, or the full `customers/…/conversionActions/…` name). */
  conversion_actions: Record<string, string | number>;
  /** Manager (MCC) account the token acts through; sent as `login-customer-id`. */
  login_customer_id?: string;
  /** Merchant Center id; when set, checkout_completed and cart_viewed carry `cartData`. */
  merchant_id?: string | number;
  /** `cartData.feedCountryCode` (ISO 3166-1 alpha-2). */
  feed_country_code?: string;
  /** `cartData.feedLanguageCode` (ISO 639-1). */
  feed_language_code?: string;
  /** REST version segment, e.g. `v26`. */
  api_version?: string;
  /** Sends `validateOnly: true`: Google checks the request and records nothing. */
  validate_only?: boolean;
  /**
   * Upload the view and cart events (cart_viewed, product_viewed, product_added_to_cart,
   * product_removed_from_cart) that conversion_actions maps. Default false: only purchases
   * and lead stages are conversions; a view counted on a primary action inflates them.
   */
  upload_view_conversions?: boolean;
  /** Accepted for uniformity; Google Ads has no test event code (use validate_only). */
  test_event_code?: string;
}

export const DEFAULT_ENDPOINT = 'https://googleads.googleapis.com';
/** v21 and older were sunset by August 2026; v22–v26 answer. Operators can pin another. */
export const DEFAULT_API_VERSION = 'v26';

const CUSTOMER_ID = '^[0-9]{3}-?[0-9]{3}-?[0-9]{4}$';
const digitsOrInteger = (pattern: string) => ({
  anyOf: [{ type: 'string', pattern }, { type: 'integer', minimum: 1 }],
});

export const settingsSchema = {
  type: 'object',
  required: ['customer_id', 'developer_token', 'access_token', 'conversion_actions'],
  additionalProperties: false,
  properties: {
    customer_id: { type: 'string', pattern: CUSTOMER_ID },
    developer_token: { type: 'string', minLength: 1 },
    access_token: { type: 'string', minLength: 1 },
    conversion_actions: {
      type: 'object',
      minProperties: 1,
      propertyNames: { type: 'string', minLength: 1 },
      additionalProperties: digitsOrInteger('^([0-9]+|customers/[0-9]+/conversionActions/[0-9]+)$'),
    },
    login_customer_id: { type: 'string', pattern: CUSTOMER_ID },
    merchant_id: digitsOrInteger('^[0-9]+$'),
    feed_country_code: { type: 'string', pattern: '^[A-Za-z]{2}$' },
    feed_language_code: { type: 'string', pattern: '^[A-Za-z]{2}$' },
    api_version: { type: 'string', pattern: '^v[0-9]+$' },
    validate_only: { type: 'boolean' },
    upload_view_conversions: { type: 'boolean' },
    ...COMMON_SETTINGS_PROPERTIES,
    // No test event code on this platform: any string, even empty, is accepted and ignored.
    test_event_code: { type: 'string' },
  },
} as const;
