// Settings of the webhook destination: the type operators write and the draft-07 schema
// `destinations add --config` is checked against (docs/api.md, "Destinations").
import { COMMON_SETTINGS_PROPERTIES, type CommonSettings } from '../../src/destinations/settings-schema.ts';

export interface WebhookSettings extends CommonSettings {
  /** Where every event is POSTed (http or https). */
  url: string;
  /** Standard Webhooks signing secret: `whsec_` + base64 of 24–64 random bytes. Secret. */
  secret: string;
  /**
   * During a secret rotation: the old secret and when it stops being used (ISO 8601).
   * Until then every request carries both signatures, so the receiver can switch at will.
   */
  previous_secret?: string;
  previous_secret_expires_at?: string;
  /** Base URL replacing the scheme, host and port of `url` (sandboxes, test doubles). */
  endpoint?: string;
  /** Copied into the body as `test_event_code`, so the receiver can tell test traffic apart. */
  test_event_code?: string;
  /**
   * Send `user` as the customer sent it instead of hashed identifiers. Never for an event
   * whose consent.marketing is false: that one gets the hashed form.
   */
  send_plaintext_identifiers?: boolean;
  /** Unset: sent regardless of consent. */
  consent_category?: 'analytics' | 'marketing';
}

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
    send_plaintext_identifiers: { type: 'boolean', description: 'send user as sent (never when consent.marketing is false); default false: hashed identifiers' },
    ...COMMON_SETTINGS_PROPERTIES,
  },
} as const;
