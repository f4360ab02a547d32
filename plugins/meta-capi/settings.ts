// Settings of the meta-capi destination: the type operators write and the draft-07 schema
// `destinations add --config` is checked against (docs/api.md, "Destinations").
import { COMMON_SETTINGS_PROPERTIES, type CommonSettings } from '../../src/destinations/settings-schema.ts';

export interface MetaCapiSettings extends CommonSettings {
  /** Pixel (dataset) id, digits only. */
  pixel_id: string;
  /** Events Manager / system-user access token. Secret. */
  access_token: string;
  /** Graph API version, e.g. `v25.0`. */
  api_version?: string;
  /** Base URL replacing `https://graph.facebook.com` (sandboxes, test doubles). */
  endpoint?: string;
  /** Events Manager test code. Meta still records test events: remove it in production. */
  test_event_code?: string;
  /** CRM name sent as `custom_data.lead_event_source` on CRM lead stages (rules read it). */
  lead_event_source?: string;
  /** Hash external_id with its case kept (default: lower-cased first, as Meta's SDK does). */
  external_id_case_sensitive?: boolean;
}

export const DEFAULT_ENDPOINT = 'https://graph.facebook.com';
export const DEFAULT_API_VERSION = 'v25.0';

export const settingsSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['pixel_id', 'access_token'],
  additionalProperties: false,
  properties: {
    external_id_case_sensitive: { type: 'boolean', description: 'hash external_id with its case kept (default false: lower-cased, as Meta\'s SDK does)' },
    pixel_id: { type: 'string', pattern: '^[0-9]{1,32}$', description: 'Meta pixel (dataset) id' },
    access_token: { type: 'string', minLength: 1, pattern: '^\\S+$', description: 'Conversions API access token' },
    api_version: { type: 'string', pattern: '^v[0-9]+\\.[0-9]+$', default: DEFAULT_API_VERSION },
    ...COMMON_SETTINGS_PROPERTIES,
    lead_event_source: { type: 'string', minLength: 1, maxLength: 100 },
  },
} as const;
