// Webhook requests: one signed POST per event. The rule (rules.json here) picks what goes
// in `data`; this module wraps it as {type, id, timestamp, data} and signs the exact bytes.
import { mergeDotPaths, type BuildInput, type OutboundRequest, type OutgoingItem } from 'tracklane/sdk';
import type { WebhookSettings } from './settings.ts';
import { signature } from './sign.ts';
import { userFor } from './identifiers.ts';

type Json = Record<string, unknown>;

/**
 * `webhook-id` is tracklane's message id (`msg_` + 32 hex): one per event and destination,
 * identical on every retry, never customer text, so receivers can deduplicate on it and it
 * is always a valid header. The customer's event.id is in the body as `id`.
 * `webhook-timestamp` is `now`, so a retry built later carries a fresh, valid timestamp.
 */
export function buildRequests({ settings, items, now }: BuildInput<WebhookSettings>): OutboundRequest[] {
  const url = targetUrl(settings);
  const timestamp = Math.floor(now / 1000);
  return items.map((item) => {
    const body = JSON.stringify(payload(item, settings));
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'webhook-id': item.messageId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatures(settings, now).map((s) => signature(s, item.messageId, timestamp, body)).join(' '),
    };
    if (settings.test_event_code) headers['webhook-test'] = headerValue(settings.test_event_code);
    return { method: 'POST', url, headers, body, eventIds: [item.eventId] };
  });
}

/**
 * Test mode: `webhook-test: <code>`, so a receiver can drop a test before reading the body
 * (the signed body carries the code too). Printable ASCII as it is; anything else
 * percent-encoded, as a header cannot carry it.
 */
function headerValue(code: string): string {
  return /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(code) ? code : encodeURIComponent(code);
}

/** The current secret, plus the previous one while its rotation window lasts (space-separated signatures). */
function signatures(settings: WebhookSettings, now: number): string[] {
  const prev = settings.previous_secret;
  const until = settings.previous_secret_expires_at ? Date.parse(settings.previous_secret_expires_at) : NaN;
  return prev && Number.isFinite(until) && now < until ? [settings.secret, prev] : [settings.secret];
}

/** `{type, id, timestamp, data}` (+ `test_event_code`); the rule may add keys, never change `id`. */
export function payload(item: OutgoingItem, settings: WebhookSettings): Json {
  const out: Json = {
    type: item.event.event.name,
    id: item.eventId,
    timestamp: new Date(item.receivedAt).toISOString(),
    data: {},
  };
  mergeDotPaths(out, item.native.fields);
  out.id = item.eventId;
  // Where the rule places `user`, the plugin decides what it holds (hashed by default).
  const data = out.data as Json | undefined;
  if (data && typeof data === 'object' && 'user' in data) data.user = userFor(item, settings);
  if (settings.test_event_code) out.test_event_code = settings.test_event_code;
  return out;
}

/** `url`, or its path and query on `endpoint`'s origin when an endpoint override is set. */
export function targetUrl(settings: WebhookSettings): string {
  if (!settings.endpoint) return settings.url;
  const target = new URL(settings.url);
  return `${settings.endpoint.replace(/\/+$/, '')}${target.pathname}${target.search}`;
}
