// LinkedIn Conversions API destination: online and offline conversions streamed to the
// conversion rules an operator maps event names to. Its default rules are rules.json in this
// folder (RULES_DIR may override them); identifiers, the li_fat_id click id, consent and the
// native event schema are declared here.
import { type DestinationPlugin, OAUTH_SECRET_SETTINGS } from 'tracklane/sdk';
import { buildRequests, MAX_EVENTS } from './build-requests.ts';
import { classifyResponse } from './classify-response.ts';
import { LINKEDIN_ATTRIBUTION, LINKEDIN_IDENTIFIERS } from './identifiers.ts';
import { nativeSchema } from './native-schema.ts';
import { settingsSchema, TOKEN_URL, type LinkedInSettings } from './settings.ts';
import { matchWarnings, unmatchable } from './warnings.ts';

const linkedin: DestinationPlugin<LinkedInSettings> = {
  name: 'linkedin',
  version: '1.0.0',
  category: 'advertising',
  consent: 'marketing',
  description: 'LinkedIn Conversions API: conversions to the conversion rules configured per event, hashed email and li_fat_id, batched up to 5,000 events',
  settingsSchema,
  secretSettings: ['access_token', ...OAUTH_SECRET_SETTINGS],
  // Member access tokens live 60 days: with client_id, client_secret and refresh_token the core refreshes them.
  oauth: { tokenUrl: TOKEN_URL },
  identifiers: LINKEDIN_IDENTIFIERS,
  attribution: LINKEDIN_ATTRIBUTION,
  nativeSchema,
  noTestMode: 'the Conversions API has no test event code, sandbox or validation endpoint',
  batch: { maxEvents: MAX_EVENTS },
  buildRequests,
  classifyResponse,
  warnings: matchWarnings,
  unmatchable,
};

export default linkedin;
export type { LinkedInSettings } from './settings.ts';
