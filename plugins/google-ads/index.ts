// Google Ads destination: click conversions (with enhanced-conversion identifiers and cart
// data) and order retractions. Rules pick the conversion action from settings and say which
// upload service with `kind`; this definition adds click ids, time, identifiers and consent.
import { viewWarnings } from './view-warnings.ts';
import { type DestinationPlugin, OAUTH_SECRET_SETTINGS } from 'tracklane/sdk';
import { GOOGLE_ADS_ATTRIBUTION } from './attribution.ts';
import { buildRequests, MAX_EVENTS, testModeWarnings, validationRequests } from './build-requests.ts';
import { classifyResponse } from './classify-response.ts';
import { nativeSchema } from './native-schema.ts';
import { settingsSchema, TOKEN_URL, type GoogleAdsSettings } from './settings.ts';

const googleAds: DestinationPlugin<GoogleAdsSettings> = {
  name: 'google-ads',
  version: '1.0.0',
  category: 'advertising',
  consent: 'marketing',
  description: 'Google Ads API: click conversions (gclid/gbraid/wbraid, enhanced conversions for leads, cart data) and retractions',
  settingsSchema,
  secretSettings: ['developer_token', 'access_token', ...OAUTH_SECRET_SETTINGS],
  // Access tokens live an hour: with client_id, client_secret and refresh_token the core refreshes them.
  oauth: { tokenUrl: TOKEN_URL },
  // Click conversions take only hashedEmail and hashedPhoneNumber, one per UserIdentifier,
  // five in all: 3 e-mails + 2 phones always fit. Keys are the UserIdentifier field names.
  // Google's normal forms for both (the same as GA4's).
  identifiers: {
    table: {
      hashedEmail: { from: 'email', normalise: 'email', hash: true, max: 3 },
      hashedPhoneNumber: { from: 'phone', normalise: 'phone', hash: true, max: 2 },
    },
    forms: { email: { removeSpaces: true, dropGmailDots: true }, phone: 'e164' },
  },
  attribution: GOOGLE_ADS_ATTRIBUTION,
  nativeSchema,
  batch: { maxEvents: MAX_EVENTS },
  buildRequests,
  validationRequests,
  classifyResponse,
  warnings: (input) => [...testModeWarnings(input), ...viewWarnings(input)],
};

export default googleAds;
