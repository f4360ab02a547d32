// Generic webhook destination: each event POSTed as JSON to the operator's URL, signed per
// Standard Webhooks. Default rules (rules.json here) choose the body's `data`; see README.md.
import type { DestinationPlugin } from 'tracklane/sdk';
import { buildRequests } from './build-requests.ts';
import { classifyResponse } from './classify-response.ts';
import { nativeSchema } from './native-schema.ts';
import { settingsSchema, type WebhookSettings } from './settings.ts';
import { optedInToPlaintext, WEBHOOK_IDENTIFIERS } from './identifiers.ts';

const webhook: DestinationPlugin<WebhookSettings> = {
  name: 'webhook',
  version: '1.0.0',
  category: 'webhook',
  // Unset: sent regardless of consent (the customer's own system); `consent_category` gates it.
  consent: null,
  description: 'Signed JSON POST of every event to your own endpoint (Standard Webhooks)',
  settingsSchema,
  secretSettings: ['secret', 'previous_secret'],
  // A valid signature lets anyone holding the preview mint messages: never shown.
  secretHeaders: ['webhook-signature'],
  // Identifiers are hashed by default, even for the customer's own system (see identifiers.ts).
  identifiers: { table: WEBHOOK_IDENTIFIERS },
  // Rules read identifiers in clear only with send_plaintext_identifiers (and marketing consent).
  plaintextIdentifiers: optedInToPlaintext,
  nativeSchema,
  batch: { maxEvents: 1 },
  buildRequests,
  classifyResponse,
};

export default webhook;
export type { WebhookSettings } from './settings.ts';
