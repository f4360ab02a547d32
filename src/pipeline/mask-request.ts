// Previews show the exact request a destination would get, minus its secrets: every
// secret setting's value, in whatever encoding it was placed, becomes `****`.
import type { DestinationPlugin, OutboundRequest } from '../destinations/types.ts';
import { MASK } from '../destinations/destination-service.ts';

export { MASK };

/** Header names whose values are credentials whatever they contain. */
const CREDENTIAL_HEADER = /authorization|token|secret|api[-_]?key|password|cookie/i;

/**
 * A copy of `req` with the values of `plugin.secretSettings` replaced by `****` in the
 * URL, header values and body (raw, URL-encoded and JSON-escaped forms), and the values
 * of credential headers (Authorization, Access-Token, …) replaced outright.
 */
export function maskRequest(
  req: OutboundRequest,
  plugin: Pick<DestinationPlugin, 'secretSettings'>,
  settings: Record<string, unknown>,
): OutboundRequest {
  const forms = new Set<string>();
  for (const key of plugin.secretSettings) {
    const v = settings[key];
    if (typeof v !== 'string' || v === '') continue;
    forms.add(v);
    forms.add(encodeURIComponent(v));
    forms.add(new URLSearchParams({ v }).toString().slice(2));
    forms.add(JSON.stringify(v).slice(1, -1));
  }
  const ordered = [...forms].sort((a, b) => b.length - a.length);
  const mask = (s: string) => ordered.reduce((acc, secret) => acc.split(secret).join(MASK), s);
  return {
    ...req,
    url: mask(req.url),
    headers: Object.fromEntries(
      Object.entries(req.headers).map(([name, value]) => [name, CREDENTIAL_HEADER.test(name) ? MASK : mask(value)]),
    ),
    body: mask(req.body),
    eventIds: [...req.eventIds],
  };
}
