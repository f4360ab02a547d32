// SSRF guard for operator-configured destination URLs. Pure.
// Save time: checkDestinationUrl(). Connect time (after DNS): isBlockedAddress(), which the
// HTTP sender applies to every resolved address and to IP-literal hosts before dispatch.
import ipaddr from 'ipaddr.js';

type Addr = ipaddr.IPv4 | ipaddr.IPv6;
type Range = { cidr: [Addr, number]; label: string };

const range = (cidr: string, label: string): Range => ({ cidr: ipaddr.parseCIDR(cidr), label });

// Every IPv4 range that is not publicly routable unicast (IANA special-purpose registry).
const IPV4_BLOCKED: readonly Range[] = [
  range('0.0.0.0/8', 'unspecified ("this network")'),
  range('10.0.0.0/8', 'private (RFC 1918)'),
  range('100.64.0.0/10', 'carrier-grade NAT (RFC 6598)'),
  range('127.0.0.0/8', 'loopback'),
  range('169.254.0.0/16', 'link-local / cloud metadata'),
  range('172.16.0.0/12', 'private (RFC 1918)'),
  range('192.0.0.0/24', 'IETF protocol assignments'),
  range('192.0.2.0/24', 'documentation (TEST-NET-1)'),
  range('192.88.99.0/24', '6to4 relay anycast'),
  range('192.168.0.0/16', 'private (RFC 1918)'),
  range('198.18.0.0/15', 'benchmarking'),
  range('198.51.100.0/24', 'documentation (TEST-NET-2)'),
  range('203.0.113.0/24', 'documentation (TEST-NET-3)'),
  range('224.0.0.0/4', 'multicast'),
  range('240.0.0.0/4', 'reserved / broadcast'),
];

// IPv6 outside global unicast 2000::/3 is never a public destination (loopback, ::, ULA
// fc00::/7 incl. fd00:ec2::254, link-local fe80::/10, multicast ff00::/8, discard, …);
// these are the special ranges inside 2000::/3, checked after the embedded-IPv4 forms.
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
const IPV6_BLOCKED: readonly Range[] = [
  range('2001::/23', 'IETF protocol assignments (incl. Teredo, benchmarking)'),
  range('2001:db8::/32', 'documentation'),
  range('3fff::/20', 'documentation'),
];
const IPV4_MAPPED = ipaddr.parseCIDR('::ffff:0:0/96');
const IPV4_TRANSLATED = ipaddr.parseCIDR('::ffff:0:0:0/96'); // RFC 6145
const NAT64 = ipaddr.parseCIDR('64:ff9b::/96'); // RFC 6052 well-known prefix
const SIX_TO_FOUR = ipaddr.parseCIDR('2002::/16'); // RFC 3056: 2002:AABB:CCDD::/48
const IPV6_OUTSIDE_UNICAST: readonly Range[] = [
  range('fc00::/7', 'unique local (fc00::/7)'),
  range('fe80::/10', 'link-local'),
  range('ff00::/8', 'multicast'),
];

const BLOCKED_HOSTNAMES = new Set(['localhost', 'metadata', 'metadata.google.internal', 'instance-data']);

function ipv4FromWords(hi: number, lo: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

function classifyV4(addr: ipaddr.IPv4): string | null {
  return IPV4_BLOCKED.find((r) => addr.match(r.cidr))?.label ?? null;
}

function classifyV6(addr: ipaddr.IPv6): string | null {
  const p = addr.parts;
  // Forms that reach an IPv4 host: judged by the IPv4 address they carry.
  if (addr.match(IPV4_MAPPED) || addr.match(IPV4_TRANSLATED) || addr.match(NAT64)) {
    const inner = classifyV4(ipv4FromWords(p[6], p[7]));
    return inner && `IPv4 ${inner} embedded in IPv6`;
  }
  if (addr.match(SIX_TO_FOUR)) {
    const inner = classifyV4(ipv4FromWords(p[1], p[2]));
    return inner && `IPv4 ${inner} embedded in 6to4`;
  }
  if (p.slice(0, 6).every((w) => w === 0)) {
    if (p[6] === 0 && p[7] === 0) return 'unspecified';
    if (p[6] === 0 && p[7] === 1) return 'loopback';
    return 'IPv4-compatible IPv6 (deprecated)';
  }
  if (!addr.match(IPV6_GLOBAL_UNICAST)) {
    return IPV6_OUTSIDE_UNICAST.find((r) => addr.match(r.cidr))?.label ?? 'not global unicast';
  }
  return IPV6_BLOCKED.find((r) => addr.match(r.cidr))?.label ?? null;
}

/**
 * Why an IP address must not be connected to, or null when it is publicly routable.
 * Accepts canonical IPv4/IPv6 text (as DNS answers and WHATWG URL hosts are), with or
 * without IPv6 brackets. Anything unparsable is refused: `'not an IP address'`.
 */
export function classifyAddress(ip: string): string | null {
  const text = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  let addr: Addr;
  try {
    addr = ipaddr.parse(text);
  } catch {
    return 'not an IP address';
  }
  return addr.kind() === 'ipv4' ? classifyV4(addr as ipaddr.IPv4) : classifyV6(addr as ipaddr.IPv6);
}

/** True when a connection to `ip` must be refused (unless private destinations are allowed). */
export function isBlockedAddress(ip: string): boolean {
  return classifyAddress(ip) !== null;
}

/** True when the WHATWG-normalised hostname is an IP literal (IPv4 dotted quad or `[v6]`). */
function isIpLiteral(hostname: string): boolean {
  return hostname.startsWith('[') || /^\d{1,3}(\.\d{1,3}){3}$/.test(hostname);
}

/**
 * Save-time check of a destination URL; returns a reason, or null when it may be used.
 * URLs are parsed as WHATWG URL (the same parser undici uses), so every IPv4 spelling it
 * normalises (`2130706433`, `0x7f.1`, `017700000001`, `127.1`, `127.0.0.%31`) is caught.
 * @example checkDestinationUrl('http://0x7f.1/', { allowPrivate: false }) // 'address 127.0.0.1 is loopback'
 */
export function checkDestinationUrl(url: string, opts: { allowPrivate: boolean }): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'not a valid URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `scheme "${u.protocol}" is not allowed (http or https only)`;
  if (u.username !== '' || u.password !== '') return 'credentials in the URL are not allowed';
  if (u.hostname === '') return 'URL has no host';
  if (opts.allowPrivate) return null;

  const host = u.hostname;
  if (isIpLiteral(host)) {
    const why = classifyAddress(host);
    return why && `address ${host} is ${why}`;
  }
  const name = host.replace(/\.+$/, '');
  if (BLOCKED_HOSTNAMES.has(name) || name.endsWith('.localhost')) return `host "${name}" is a local or metadata name`;
  return null;
}
