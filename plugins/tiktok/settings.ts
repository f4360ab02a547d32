// Settings of the tiktok destination: the type operators write and the draft-07 schema
// `destinations add --config` is checked against (docs/api.md, "Destinations").
import { COMMON_SETTINGS_PROPERTIES, type CommonSettings } from '../../src/destinations/settings-schema.ts';

export interface TiktokSettings extends CommonSettings {
  /** Pixel code, sent as `event_source_id` of web events. */
  pixel_code: string;
  /** Events API access token, sent in the `Access-Token` header. Secret. */
  access_token: string;
  /** Base URL replacing `https://business-api.tiktok.com` (sandboxes, test doubles). */
  endpoint?: string;
  /** Events Manager test code; TikTok keeps test events out of production data. */
  test_event_code?: string;
  /**
   * CRM event set id. When set, the rules' CRM lead stages go as `event_source: "crm"` to
   * this event set (with their `lead` object); otherwise they go as web events to the pixel.
   */
  crm_event_set_id?: string;
  /** CRM name sent as `lead.lead_event_source` on CRM lead stages (rules read it). */
  lead_event_source?: string;
}

export const DEFAULT_ENDPOINT = 'https://business-api.tiktok.com';

export const settingsSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['pixel_code', 'access_token'],
  additionalProperties: false,
  properties: {
    pixel_code: { type: 'string', pattern: '^[A-Za-z0-9]{1,64}$', description: 'TikTok pixel code' },
    access_token: { type: 'string', minLength: 1, pattern: '^\\S+$', description: 'Events API access token' },
    ...COMMON_SETTINGS_PROPERTIES,
    crm_event_set_id: { type: 'string', pattern: '^[A-Za-z0-9]{1,64}$' },
    lead_event_source: { type: 'string', minLength: 1, maxLength: 100 },
  },
} as const;
