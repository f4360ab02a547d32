// Snap Conversions API v3 destination: web and offline conversions to a Snap Pixel. Its
// default rules are rules.json in this folder (RULES_DIR may override them); the
// identifiers, the click id and _scid cookie, consent and the native event schema are declared here.
import type { DestinationPlugin } from 'tracklane/sdk';
import { buildRequests, MAX_EVENTS, validationRequests } from './build-requests.ts';
import { classifyResponse } from './classify-response.ts';
import { SNAPCHAT_ATTRIBUTION, SNAPCHAT_IDENTIFIERS } from './identifiers.ts';
import { nativeSchema } from './native-schema.ts';
import { settingsSchema, type SnapchatSettings } from './settings.ts';
import { snapWarnings } from './warnings.ts';

const snapchat: DestinationPlugin<SnapchatSettings> = {
  name: 'snapchat',
  version: '1.0.0',
  category: 'advertising',
  consent: 'marketing',
  description: 'Snap Conversions API v3: PURCHASE, ADD_CART, VIEW_CONTENT, PAGE_VIEW and SIGN_UP, batched up to 1,000 events',
  settingsSchema,
  secretSettings: ['access_token'],
  identifiers: SNAPCHAT_IDENTIFIERS,
  attribution: SNAPCHAT_ATTRIBUTION,
  nativeSchema,
  batch: { maxEvents: MAX_EVENTS },
  buildRequests,
  validationRequests,
  classifyResponse,
  warnings: snapWarnings,
};

export default snapchat;
export type { SnapchatSettings } from './settings.ts';
