// Settings of the webhook destination: the draft-07 schema `destinations add --config` is
// checked against (docs/api.md, "Destinations"), and the type derived from it.
import { COMMON_SETTINGS_PROPERTIES, type SettingsOf } from 'tracklane/sdk';

/**
 * `whsec_` then standard base64 (padded) of 24 to 64 bytes. The lookahead bounds the size:
 * 32 characters without padding (24 bytes), 36–84 (25–63 bytes), or 88 ending `==` (64
 * bytes); the rest checks the alphabet and the padding.
 */
export const SECRET_PATTERN =
  '^whsec_(?=[A-Za-z0-9+/]{32}$|.{36,84}$|.{86}==$)(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$';

export const settingsSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['url', 'secret'],
  dependencies: { previous_secret: ['previous_secret_expires_at'] },
  additionalProperties: false,
  properties: {
    url: { type: 'string', format: 'uri', pattern: '^https?://[^/?#]', description: 'receiver URL' },
    secret: { type: 'string', pattern: SECRET_PATTERN, description: 'whsec_ + base64 signing secret' },
    previous_secret: { type: 'string', pattern: SECRET_PATTERN, description: 'the secret being rotated away; also signed with until previous_secret_expires_at' },
    previous_secret_expires_at: { type: 'string', format: 'date-time' },
    send_plaintext_identifiers: { type: 'boolean', description: 'send user as sent, and let the rules read it so (never when consent.marketing is false); default false: hashed identifiers, for the rules too' },
    ...COMMON_SETTINGS_PROPERTIES,
  },
} as const;

/** The settings as plugin code reads them: derived from the schema above, so the two cannot drift apart. */
export type WebhookSettings = SettingsOf<typeof settingsSchema>;
