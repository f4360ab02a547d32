// /metrics without METRICS_TOKEN answers anyone who reaches the port, and its labels name
// accounts' script ids (half of an intake credential). That is fine on loopback, where only
// the machine's own scraper reaches it; on any other address the operator is warned at start.
import ipaddr from 'ipaddr.js';

/**
 * Whether the server's bound address (server.address().address) is loopback only:
 * 127.0.0.0/8, ::1, or 127.x mapped into IPv6. Decided on the address the socket is bound
 * to, not on HOST's spelling, so `localhost`, `127.1` or `0:0:0:0:0:0:0:1` count as
 * loopback, and `0.0.0.0`, `::`, `0` or a hostname that resolves elsewhere do not.
 * Anything unparsable counts as exposed.
 */
export function isLoopbackAddress(address: string): boolean {
  try {
    return ipaddr.process(address).range() === 'loopback';
  } catch {
    return false;
  }
}

/** The start-up warning for a /metrics that anyone on the network may read, or null when there is none. */
export function metricsExposureWarning(boundAddress: string, metricsToken: string | null): string | null {
  if (metricsToken !== null || isLoopbackAddress(boundAddress)) return null;
  return `GET /metrics answers anyone who reaches ${boundAddress} without a token, and its labels name accounts' script ids: `
    + 'set METRICS_TOKEN (16+ characters), or listen on loopback only (HOST=127.0.0.1) behind a proxy';
}
