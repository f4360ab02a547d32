// Previews show the exact request a destination would get, minus its secrets. Masking is
// structural, never a text search over the request (which would also rewrite any event
// text that happens to contain a secret, e.g. a one-character api_secret inside a user
// agent): the preview is built from settings whose secret values already are `****`, so
// they appear as `****` exactly where the plugin puts them; headers the plugin declares as
// derived from a secret (a signature) and credential headers are then masked whole.
import type { DestinationPlugin, OutboundRequest } from '../destinations/types.ts';
import { MASK } from '../destinations/destination-service.ts';

export { MASK };

/** Header names whose values are credentials whatever they contain. */
const CREDENTIAL_HEADER = /authorization|token|secret|api[-_]?key|password|cookie/i;

/** `settings` with every secret setting that is set replaced by `****`. */
export function maskedSettings(
  plugin: Pick<DestinationPlugin, 'secretSettings'>,
  settings: Record<string, unknown>,
): Record<string, unknown> {
  const out = { ...settings };
  for (const key of plugin.secretSettings) if (typeof out[key] === 'string' && out[key] !== '') out[key] = MASK;
  return out;
}

/**
 * A copy of `req` (built from maskedSettings) with the headers the plugin derives from its
 * secrets (`secretHeaders`, e.g. a signature) and credential headers (Authorization,
 * Access-Token, …) replaced by `****`. URL and body are left byte for byte.
 */
export function maskRequest(req: OutboundRequest, plugin: Pick<DestinationPlugin, 'secretHeaders'>): OutboundRequest {
  const derived = new Set((plugin.secretHeaders ?? []).map((h) => h.toLowerCase()));
  return {
    ...req,
    headers: Object.fromEntries(Object.entries(req.headers).map(([name, value]) =>
      [name, derived.has(name.toLowerCase()) || CREDENTIAL_HEADER.test(name) ? MASK : value])),
    eventIds: [...req.eventIds],
  };
}
