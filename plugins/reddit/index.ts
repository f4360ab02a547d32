// Reddit Conversions API (v3) destination: web, app and offline conversions to a Reddit
// Pixel. Its default rules are rules.json in this folder (RULES_DIR may override them); the
// identifiers, the rdt_cid click id and _rdt_uuid cookie, consent and the native event
// schema are declared here.
import type { DestinationPlugin } from 'tracklane/sdk';
import { buildRequests, MAX_EVENTS } from './build-requests.ts';
import { classifyResponse } from './classify-response.ts';
import { REDDIT_ATTRIBUTION, REDDIT_IDENTIFIERS } from './identifiers.ts';
import { nativeSchema } from './native-schema.ts';
import { settingsSchema, type RedditSettings } from './settings.ts';
import { redditWarnings } from './warnings.ts';

const reddit: DestinationPlugin<RedditSettings> = {
  name: 'reddit',
  version: '1.0.0',
  category: 'advertising',
  consent: 'marketing',
  description: 'Reddit Conversions API v3: PURCHASE, ADD_TO_CART, VIEW_CONTENT, PAGE_VISIT and LEAD to a Reddit Pixel, batched up to 1,000 events',
  settingsSchema,
  secretSettings: ['access_token'],
  identifiers: REDDIT_IDENTIFIERS,
  attribution: REDDIT_ATTRIBUTION,
  nativeSchema,
  batch: { maxEvents: MAX_EVENTS },
  buildRequests,
  // Endpoint 2's platform check: Reddit has no validation endpoint, only Event Testing's test_id.
  validationRequests: (input) => (input.settings.test_event_code ? buildRequests(input) : {
    unavailable: 'Reddit sends events to Event Testing only with a test_id (test_event_code) and this destination has none: the request would record a real conversion',
  }),
  classifyResponse,
  warnings: redditWarnings,
};

export default reddit;
export type { RedditSettings } from './settings.ts';
