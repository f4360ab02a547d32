// GA4 destination settings (docs/api.md, "Destinations"):
// the type and its ajv draft-07 schema, written together so they cannot drift apart.
import { COMMON_SETTINGS_PROPERTIES, type CommonSettings } from '../../src/destinations/settings-schema.ts';

export interface Ga4Settings extends CommonSettings {
  /** Web data stream id, `G-XXXXXXXXXX`. */
  measurement_id: string;
  /** Measurement Protocol API secret of that stream (a secret). */
  api_secret: string;
  /** Replaces `https://www.google-analytics.com` (e.g. `https://region1.google-analytics.com`, a sandbox). */
  endpoint?: string;
  /** Accepted for uniformity; GA4 has no test event code, so it is ignored. */
  test_event_code?: string;
}

export const DEFAULT_ENDPOINT = 'https://www.google-analytics.com';

export const settingsSchema = {
  type: 'object',
  required: ['measurement_id', 'api_secret'],
  additionalProperties: false,
  properties: {
    measurement_id: { type: 'string', pattern: '^G-[A-Za-z0-9]+$' },
    api_secret: { type: 'string', minLength: 1 },
    ...COMMON_SETTINGS_PROPERTIES,
    // No test event code on this platform: any string, even empty, is accepted and ignored.
    test_event_code: { type: 'string' },
  },
} as const;
