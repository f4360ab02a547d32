// Settings of the meta-capi destination: the draft-07 schema `destinations add --config` is
// checked against (docs/api.md, "Destinations"), and the type derived from it.
import { COMMON_SETTINGS_PROPERTIES, type SettingsOf } from 'tracklane/sdk';

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

/** The settings as plugin code reads them: derived from the schema above, so the two cannot drift apart. */
export type MetaCapiSettings = SettingsOf<typeof settingsSchema>;
