// Meta (Facebook) Conversions API destination: server events to a pixel's /events edge.
// Default rules (rules.json here) name the event and fill custom_data; see README.md.
import type { DestinationPlugin } from 'tracklane/sdk';
import { buildRequests, MAX_EVENTS } from './build-requests.ts';
import { classifyResponse } from './classify-response.ts';
import { nativeSchema } from './native-schema.ts';
import { META_ATTRIBUTION } from './meta-cookies.ts';
import { META_IDENTIFIERS } from './identifiers.ts';
import { settingsSchema, type MetaCapiSettings } from './settings.ts';
import { websiteWarnings } from './website-warnings.ts';

const metaCapi: DestinationPlugin<MetaCapiSettings> = {
  name: 'meta-capi',
  version: '1.0.0',
  category: 'advertising',
  consent: 'marketing',
  description: 'Meta Conversions API: Purchase, ViewContent, AddToCart, Lead and CRM lead stages, batched up to 1,000 events',
  settingsSchema,
  secretSettings: ['access_token'],
  identifiers: META_IDENTIFIERS,
  attribution: META_ATTRIBUTION,
  matchKeys: ['fbp', 'fbc'],
  nativeSchema,
  batch: { maxEvents: MAX_EVENTS },
  buildRequests,
  // Endpoint 2's platform check: Meta has no validation endpoint, only its test code.
  validationRequests: (input) => (input.settings.test_event_code ? buildRequests(input) : {
    unavailable: 'Meta checks events only when they carry a test_event_code (Events Manager, Test events) and this destination has none: the request would record a real conversion',
  }),
  classifyResponse,
  warnings: websiteWarnings,
};

export default metaCapi;
export type { MetaCapiSettings } from './settings.ts';
