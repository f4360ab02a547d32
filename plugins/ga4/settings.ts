// GA4 destination settings (docs/api.md, "Destinations"):
// the ajv draft-07 schema, and the type derived from it. `endpoint` replaces
// https://www.google-analytics.com (e.g. https://region1.google-analytics.com, a sandbox).
import { COMMON_SETTINGS_PROPERTIES, type SettingsOf } from 'tracklane/sdk';

export const DEFAULT_ENDPOINT = 'https://www.google-analytics.com';

export const settingsSchema = {
  type: 'object',
  required: ['measurement_id', 'api_secret'],
  additionalProperties: false,
  properties: {
    measurement_id: { type: 'string', pattern: '^G-[A-Za-z0-9]+$', description: 'web data stream id, G-XXXXXXXXXX' },
    api_secret: { type: 'string', minLength: 1, description: 'Measurement Protocol API secret of that stream (secret)' },
    // test_event_code (common): test mode, sent to the validation server (/debug/mp/collect).
    ...COMMON_SETTINGS_PROPERTIES,
  },
} as const;

/** The settings as plugin code reads them: derived from the schema above, so the two cannot drift apart. */
export type Ga4Settings = SettingsOf<typeof settingsSchema>;
