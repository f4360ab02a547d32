// The client's address, the one thing the IP allow-lists, the pre-authentication limit and
// the logs all key on. X-Forwarded-For is believed only as far as TRUST_PROXY says:
//   off (default)   the socket address; X-Forwarded-For changes nothing.
//   N (1, 2, …)     N trusted proxies in front: walk N hops left from the socket address
//                   through X-Forwarded-For (1: the right-most entry, the one the proxy
//                   added); a shorter chain gives its left-most address.
//   CIDR list       walk left from the socket address past every address inside the list;
//                   the first one outside it is the client.
// An entry that is not an address where the walk needs one makes the client `unknown`:
// matched by no allow-list, so garbage can neither reach past itself nor borrow the
// trusted proxy's own address.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** The client address when X-Forwarded-For holds something that is not an address. */
export const UNKNOWN_CLIENT = 'unknown';

export type TrustProxy =
  | { kind: 'off' }
  | { kind: 'hops'; hops: number }
  | { kind: 'cidrs'; ranges: Range[]; text: string };

/** TRUST_PROXY → a TrustProxy; throws an Error with a one-line reason. */
export function parseTrustProxy(raw: string | null | undefined): TrustProxy {
  const s = (raw ?? '').trim();
  if (s === '' || s === '0' || s.toLowerCase() === 'false') return { kind: 'off' };
  if (/^\d+$/.test(s)) {
    const hops = Number(s);
    if (hops > 32) throw new Error(`TRUST_PROXY must be a hop count up to 32 or a list of proxy CIDRs, got "${s}"`);
    return { kind: 'hops', hops };
  }
  const ranges = s.split(',').map((part) => parseRange(part.trim()));
  return { kind: 'cidrs', ranges, text: s };
}

function parseRange(text: string): Range {
  try {
    if (text.includes('/')) return normaliseRange(ipaddr.parseCIDR(text));
    const addr = normalise(text);
    if (addr === null) throw new Error();
    const parsed = ipaddr.parse(addr);
    return [parsed, parsed.kind() === 'ipv4' ? 32 : 128];
  } catch {
    throw new Error(`TRUST_PROXY: "${text}" is not an IP address or CIDR (use a hop count such as 1, or e.g. 10.0.0.0/8,127.0.0.1)`);
  }
}

function normaliseRange([net, bits]: Range): Range {
  if (net.kind() === 'ipv6' && (net as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
    return [(net as ipaddr.IPv6).toIPv4Address(), bits - 96];
  }
  return [net, bits];
}

/**
 * Socket addresses seen recently → their canonical text: a keep-alive client sends many
 * requests from one address, and parsing it (regexes, ipaddr.js) cost ~2 % of the HTTP
 * thread under load. Bounded: cleared whenever it reaches NORMALISED_MAX entries.
 */
const normalisedSockets = new Map<string, string | null>();
const NORMALISED_MAX = 4096;

function normaliseSocket(address: string): string | null {
  let out = normalisedSockets.get(address);
  if (out === undefined) {
    out = normalise(address);
    if (normalisedSockets.size >= NORMALISED_MAX) normalisedSockets.clear();
    normalisedSockets.set(address, out);
  }
  return out;
}

/** An address in canonical text (IPv4-mapped IPv6 as IPv4, zone and port removed), or null. */
export function normalise(text: string): string | null {
  let s = text.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(s);
  if (bracketed) s = bracketed[1];
  else if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(s)) s = s.slice(0, s.lastIndexOf(':'));
  s = s.replace(/%.*$/, '');
  if (isIP(s) === 0) return null;
  return ipaddr.process(s).toString();
}

const inRanges = (addr: string, ranges: readonly Range[]): boolean => {
  const parsed = ipaddr.parse(addr);
  return ranges.some(([net, bits]) => net.kind() === parsed.kind() && parsed.match([net, bits] as never));
};

/**
 * @example
 * clientIp('10.0.0.2', '10.1.2.3, 203.0.113.9', { kind: 'hops', hops: 1 }) // → '203.0.113.9'
 * clientIp('198.51.100.7', '10.1.2.3', { kind: 'off' })                  // → '198.51.100.7'
 */
export function clientIp(socketAddress: string | undefined, forwardedFor: string | undefined, trust: TrustProxy): string {
  const socket = normaliseSocket(socketAddress ?? '') ?? (socketAddress ?? '');
  if (trust.kind === 'off' || !forwardedFor) return socket;
  const chain = forwardedFor.split(',').map((e) => e.trim()).filter((e) => e !== '');
  let current = socket;
  for (let i = chain.length - 1, hop = 0; i >= 0; i--, hop++) {
    if (trust.kind === 'hops' && hop >= trust.hops) break;
    if (trust.kind === 'cidrs' && (normalise(current) === null || !inRanges(current, trust.ranges))) break;
    const next = normalise(chain[i]);
    if (next === null) return UNKNOWN_CLIENT;
    current = next;
  }
  return current;
}
