// What the webhook sends of `user`: by default every identifier normalised and SHA-256
// hashed, as the ad platforms get them, under names that say so. The normalisation is the
// generic one (the normalisers' default forms: e-mail trimmed and lower-cased, phone in
// E.164 with its `+`, names trimmed and lower-cased). City, region and country go in
// plain text (they identify no one), and `id` is the customer's own customer id.
import type { IdentifierTable, OutgoingItem } from 'tracklane/sdk';
import type { WebhookSettings } from './settings.ts';

export const WEBHOOK_IDENTIFIERS: IdentifierTable = {
  id: { from: ['external_id', 'id'], normalise: 'externalId', hash: false },
  sha256_email: { from: 'email', normalise: 'email', hash: true, max: 5 },
  sha256_phone: { from: 'phone', normalise: 'phone', hash: true, max: 5 },
  sha256_first_name: { from: 'first_name', normalise: 'name', hash: true },
  sha256_last_name: { from: 'last_name', normalise: 'name', hash: true },
  sha256_street: { from: 'street', normalise: 'street', hash: true },
  sha256_postal_code: { from: 'postal_code', normalise: 'postalCode', hash: true },
  city: { from: 'city', normalise: 'city', hash: false },
  region: { from: 'region', normalise: 'region', hash: false },
  country: { from: 'country', normalise: 'country', hash: false },
};

/**
 * The body's `data.user`: the hashed identifiers; the user as sent only when the
 * destination sets `send_plaintext_identifiers` and the event's marketing consent is not
 * refused. Whatever a rule put under `data.user` is replaced, so the default rule and any
 * account rule that maps `data.user` send only this; a rule that copies user fields to
 * another key copies what the rules read, hashes under the same two conditions.
 */
export function userFor(item: OutgoingItem, settings: WebhookSettings): Record<string, unknown> {
  if (optedInToPlaintext(settings) && item.event.consent.marketing !== false) {
    return (item.event.user ?? {}) as Record<string, unknown>;
  }
  return { ...item.identifiers };
}

/**
 * The operator's opt-in to plaintext identifiers (the plugin's `plaintextIdentifiers`):
 * without it the rules, too, read every identifier hashed, so none can send one in clear.
 */
export function optedInToPlaintext(settings: Readonly<Record<string, unknown>>): boolean {
  return settings.send_plaintext_identifiers === true;
}
