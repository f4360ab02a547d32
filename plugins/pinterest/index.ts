// Pinterest Conversions API destination: web, app and offline conversions to an ad account.
// Its default rules are rules.json in this folder (RULES_DIR may override them); the
// identifiers, the epik click id, consent and the native event schema are declared here.
import type { DestinationPlugin } from 'tracklane/sdk';
import { buildRequests, MAX_EVENTS } from './build-requests.ts';
import { classifyResponse } from './classify-response.ts';
import { PINTEREST_ATTRIBUTION, PINTEREST_IDENTIFIERS } from './identifiers.ts';
import { nativeSchema } from './native-schema.ts';
import { settingsSchema, type PinterestSettings } from './settings.ts';
import { matchWarnings } from './warnings.ts';

const pinterest: DestinationPlugin<PinterestSettings> = {
  name: 'pinterest',
  version: '1.0.0',
  category: 'advertising',
  consent: 'marketing',
  description: 'Pinterest Conversions API: checkout, add_to_cart, page_visit and lead, batched up to 1,000 events',
  settingsSchema,
  secretSettings: ['access_token'],
  identifiers: PINTEREST_IDENTIFIERS,
  attribution: PINTEREST_ATTRIBUTION,
  nativeSchema,
  batch: { maxEvents: MAX_EVENTS },
  buildRequests,
  // Endpoint 2's platform check: ?test=true, which Pinterest checks and records none of.
  validationRequests: (input) => buildRequests({ ...input, settings: { ...input.settings, test: true } }),
  classifyResponse,
  warnings: matchWarnings,
};

export default pinterest;
export type { PinterestSettings } from './settings.ts';
