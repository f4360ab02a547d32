// TikTok Events API 2.0 destination: web events to a pixel (and, optionally, CRM lead
// stages to a CRM event set). Default rules (rules.json here) name the event and fill properties.
import type { DestinationPlugin } from 'tracklane/sdk';
import { TIKTOK_ATTRIBUTION } from './attribution.ts';
import { buildRequests, MAX_EVENTS } from './build-requests.ts';
import { classifyResponse } from './classify-response.ts';
import { nativeSchema } from './native-schema.ts';
import { TIKTOK_IDENTIFIERS } from './identifiers.ts';
import { settingsSchema, type TiktokSettings } from './settings.ts';

const tiktok: DestinationPlugin<TiktokSettings> = {
  name: 'tiktok',
  version: '1.0.0',
  category: 'advertising',
  consent: 'marketing',
  description: 'TikTok Events API 2.0: Purchase, ViewContent, AddToCart, Lead and lead stages, batched up to 1,000 events',
  settingsSchema,
  secretSettings: ['access_token'],
  identifiers: TIKTOK_IDENTIFIERS,
  attribution: TIKTOK_ATTRIBUTION,
  matchKeys: ['ttp', 'ttclid'],
  nativeSchema,
  batch: { maxEvents: MAX_EVENTS },
  buildRequests,
  // Endpoint 2's platform check: TikTok has no validation endpoint, only its test code.
  validationRequests: (input) => (input.settings.test_event_code ? buildRequests(input) : {
    unavailable: 'TikTok keeps events out of production data only when they carry a test_event_code (Events Manager, Test events) and this destination has none: the request would record a real conversion',
  }),
  classifyResponse,
};

export default tiktok;
export type { TiktokSettings } from './settings.ts';
