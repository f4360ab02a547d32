// GA4 destination settings (INTERFACE.md "Destinations, as configured by operators"):
// the type and its ajv draft-07 schema, written together so they cannot drift apart.

export interface Ga4Settings {
  /** Web data stream id, `G-XXXXXXXXXX`. */
  measurement_id: string;
  /** Measurement Protocol API secret of that stream (a secret). */
  api_secret: string;
  /** Replaces `https://www.google-analytics.com` (e.g. `https://region1.google-analytics.com`, a sandbox). */
  endpoint?: string;
  /** Accepted for uniformity; GA4 has no test event code, so it is ignored. */
  test_event_code?: string;
  events?: string[];
  consent_category?: 'analytics' | 'marketing';
}

export const DEFAULT_ENDPOINT = 'https://www.google-analytics.com';

export const settingsSchema = {
  type: 'object',
  required: ['measurement_id', 'api_secret'],
  additionalProperties: false,
  properties: {
    measurement_id: { type: 'string', pattern: '^G-[A-Za-z0-9]+$' },
    api_secret: { type: 'string', minLength: 1 },
    endpoint: { type: 'string', format: 'uri', pattern: '^https?://' },
    test_event_code: { type: 'string' },
    events: { type: 'array', items: { type: 'string', minLength: 1 }, uniqueItems: true },
    consent_category: { type: 'string', enum: ['analytics', 'marketing'] },
  },
} as const;
