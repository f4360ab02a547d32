// IP allow-list over IPv4 and IPv6 CIDRs (ipaddr.js). IPv4-mapped IPv6 addresses count as
// IPv4. The address is the client address (src/client-ip.ts): the socket address, or
// with TRUST_PROXY set, the one the trusted proxies put in X-Forwarded-For.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { AppError } from '../../errors.ts';
import type { IpAllowAuthConfig } from '../endpoint-config.ts';
import { AuthConfigError, type AuthCheck } from './types.ts';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** `10.0.0.0/8`, `2001:db8::/32`, or a bare address (one host). Dotted-quad IPv4 only. */
export function parseCidr(text: string): Range {
  const s = text.trim();
  const [addr, bits] = s.includes('/') ? s.split('/', 2) : [s, undefined];
  const kind = isIP(addr);
  if (kind === 0) throw new AuthConfigError(`"${text}" is not an IPv4 or IPv6 address or CIDR`);
  const max = kind === 4 ? 32 : 128;
  if (bits !== undefined && !/^\d{1,3}$/.test(bits)) throw new AuthConfigError(`"${text}" has a bad prefix length`);
  const prefix = bits === undefined ? max : Number(bits);
  if (prefix > max) throw new AuthConfigError(`"${text}" has a prefix longer than ${max} bits`);
  let parsed = ipaddr.parse(addr);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress() && prefix >= 96) {
    return [(parsed as ipaddr.IPv6).toIPv4Address(), prefix - 96];
  }
  return [parsed, prefix];
}

/** Whether `ip` is inside any of `ranges`; false for anything that is not an address. */
export function ipAllowed(ip: string, ranges: readonly Range[]): boolean {
  const bare = ip.replace(/%.*$/, '');
  if (isIP(bare) === 0) return false;
  const addr = ipaddr.process(bare);
  return ranges.some(([net, bits]) => net.kind() === addr.kind() && addr.match([net, bits] as never));
}

export function ipAllowAuth(cfg: IpAllowAuthConfig): AuthCheck {
  const ranges = cfg.cidrs.map(parseCidr);
  return {
    type: 'ip_allow',
    needsBody: false,
    check(req) {
      if (ipAllowed(req.ip, ranges)) return null;
      return new AppError('ACCESS_NOT_ENABLED', 403, 'Requests to this endpoint are not allowed from this address');
    },
  };
}
