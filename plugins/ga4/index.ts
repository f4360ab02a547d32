// GA4 Measurement Protocol destination: rules name the event and its params; this
// definition adds the user envelope (client_id, user_id, user_data, consent, IP, UA).
import type { DestinationPlugin } from 'tracklane/sdk';
import { GA4_ATTRIBUTION } from './attribution.ts';
import { buildRequests, MAX_EVENTS, requestWarnings, validationRequests } from './build-requests.ts';
import { classifyResponse } from './classify-response.ts';
import { nativeSchema } from './native-schema.ts';
import { GA4_IDENTIFIERS } from './identifiers.ts';
import { settingsSchema, type Ga4Settings } from './settings.ts';

const ga4: DestinationPlugin<Ga4Settings> = {
  name: 'ga4',
  version: '1.0.0',
  category: 'analytics',
  consent: 'analytics',
  description: 'Google Analytics 4 via the Measurement Protocol (POST /mp/collect), e-commerce and lead events',
  settingsSchema,
  secretSettings: ['api_secret'],
  // user_id plus user_data.* (e-mail, phone, address), in Google's normal forms.
  identifiers: GA4_IDENTIFIERS,
  attribution: GA4_ATTRIBUTION,
  nativeSchema,
  batch: { maxEvents: MAX_EVENTS },
  buildRequests,
  validationRequests,
  classifyResponse,
  warnings: requestWarnings,
};

export default ga4;
