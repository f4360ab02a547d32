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
  return {
    ...req,
    headers: Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, isMaskedHeader(name, plugin) ? MASK : value])),
    eventIds: [...req.eventIds],
  };
}

/** Per list of secret headers (a plugin's, for its life): the same names lower-cased. */
const derivedOf = new WeakMap<readonly string[], Set<string>>();
const NO_HEADERS: readonly string[] = [];

/** Whether maskRequest masks header `name` whole: one the plugin derives from a secret, or a credential. */
export function isMaskedHeader(name: string, plugin: Pick<DestinationPlugin, 'secretHeaders'>): boolean {
  const list = plugin.secretHeaders ?? NO_HEADERS;
  let derived = derivedOf.get(list);
  if (derived === undefined) derivedOf.set(list, (derived = new Set(list.map((h) => h.toLowerCase()))));
  return derived.has(name.toLowerCase()) || CREDENTIAL_HEADER.test(name);
}
