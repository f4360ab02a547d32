// What an attempt sent, kept with it so the trace shows the request as it went out (its
// timestamp, its signature header masked) instead of one rebuilt when the trace is opened.
// Secrets never reach the store: credential and signature headers are masked whole, and a
// secret setting's value is masked wherever else it appears (a key in the URL or the body).
import { hash } from 'node:crypto';
import type { DestinationPlugin, OutboundRequest } from '../destinations/types.ts';
import { isMaskedHeader, MASK } from '../pipeline/mask-request.ts';
import { bodyBytes } from './net/body-bytes.ts';
import type { SentRequest } from '../store/delivery-contract.ts';

/** Body text kept per attempt; the digest and size are always of the whole body. */
export const SENT_BODY_BYTES = 16 * 1024;

/** Per settings object (a lane keeps one until the destination changes): its secrets, worked out once, not per attempt. */
const secretsOf = new WeakMap<Record<string, unknown>, string[]>();

function secretValues(plugin: Pick<DestinationPlugin, 'secretSettings'>, settings: Record<string, unknown>): string[] {
  let known = secretsOf.get(settings);
  if (known === undefined) secretsOf.set(settings, (known = listSecrets(plugin, settings)));
  return known;
}

function listSecrets(plugin: Pick<DestinationPlugin, 'secretSettings'>, settings: Record<string, unknown>): string[] {
  const out = new Set<string>();
  for (const key of plugin.secretSettings) {
    const v = settings[key];
    if (typeof v !== 'string' || v === '') continue;
    out.add(v);
    out.add(encodeURIComponent(v));
    out.add(JSON.stringify(v).slice(1, -1));
  }
  // Longest first, so a secret containing another is masked whole.
  return [...out].sort((a, b) => b.length - a.length);
}

function maskValues(text: string, secrets: readonly string[]): string {
  let out = text;
  // Most texts hold no secret: looked for before a copy is made.
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(MASK);
  return out;
}

/**
 * The request as kept with its attempt, secrets masked. `keepBody` false (an attempt that
 * succeeded): the body's size and digest only, as the body is the mapping of the stored event
 * and a trace rebuilds it (checked against the digest); an attempt that failed keeps its text,
 * as what a receiver refused is what an operator needs to read.
 */
export function sentRequest(
  req: OutboundRequest, plugin: Pick<DestinationPlugin, 'secretSettings' | 'secretHeaders'>, settings: Record<string, unknown>, keepBody = true,
): SentRequest {
  const secrets = secretValues(plugin, settings);
  // The bytes the sender sent (encoded once per request, net/body-bytes.ts).
  const encoded = bodyBytes(req);
  const bytes = encoded.length;
  const kept = !keepBody ? null : bytes <= SENT_BODY_BYTES ? req.body : encoded.subarray(0, SENT_BODY_BYTES).toString('utf8');
  // As maskRequest's headers (credential and secret-derived ones masked whole), then any secret value masked.
  const headers = Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, maskValues(isMaskedHeader(name, plugin) ? MASK : value, secrets)]));
  return {
    method: req.method,
    url: maskValues(req.url, secrets),
    headers,
    body: kept === null ? null : maskValues(kept, secrets),
    bodyBytes: bytes,
    bodySha256: hash('sha256', encoded, 'hex'),
    bodyTruncated: kept !== null && bytes > SENT_BODY_BYTES,
  };
}
