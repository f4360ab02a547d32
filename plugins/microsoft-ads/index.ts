// Microsoft Advertising destination: server-side UET events to a tag through the
// Conversions API (CAPI). Its default rules are rules.json in this folder (RULES_DIR may
// override them); the identifiers, the msclkid and UET visitor id, consent and the native
// event schema are declared here.
import type { DestinationPlugin } from 'tracklane/sdk';
import { MICROSOFT_ADS_ATTRIBUTION } from './attribution.ts';
import { buildRequests, MAX_EVENTS } from './build-requests.ts';
import { classifyResponse } from './classify-response.ts';
import { MICROSOFT_ADS_IDENTIFIERS } from './identifiers.ts';
import { nativeSchema } from './native-schema.ts';
import { settingsSchema, type MicrosoftAdsSettings } from './settings.ts';
import { matchWarnings, unmatchable } from './warnings.ts';

const microsoftAds: DestinationPlugin<MicrosoftAdsSettings> = {
  name: 'microsoft-ads',
  version: '1.0.0',
  category: 'advertising',
  consent: 'marketing',
  description: 'Microsoft Advertising UET Conversions API: purchase, cart, product and lead events as custom UET events, batched up to 1,000',
  settingsSchema,
  secretSettings: ['access_token'],
  identifiers: MICROSOFT_ADS_IDENTIFIERS,
  attribution: MICROSOFT_ADS_ATTRIBUTION,
  matchKeys: ['msclkid', 'uetvid'],
  nativeSchema,
  noTestMode: 'the UET Conversions API has no test event code or validation endpoint',
  batch: { maxEvents: MAX_EVENTS },
  buildRequests,
  classifyResponse,
  warnings: matchWarnings,
  unmatchable,
};

export default microsoftAds;
export type { MicrosoftAdsSettings } from './settings.ts';
