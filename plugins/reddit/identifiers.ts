// What Reddit's Conversions API gets of the user and the browser, in Reddit's normal forms:
// e-mail canonicalised as Reddit documents it (lower-cased, `+alias` and every
// non-alphanumeric character of the local part removed) then SHA-256; phone in E.164 with
// its `+`, and the external id trimmed, both SHA-256; the IP address SHA-256; the user agent
// as the browser sent it; the `rdt_cid` click id and the `_rdt_uuid` pixel cookie as read.
import { type AttributionSpec, isSha256Hex, normaliseEmail, sha256Hex, type IdentifierSpec } from 'tracklane/sdk';

/**
 * The generic step gives `user.email` (trimmed, lower-cased, or a pre-hashed digest as it
 * came), which decides whether there is an e-mail at all and feeds the preview warnings;
 * buildRequests replaces a plaintext one by Reddit's canonical hash (redditEmailHash).
 */
export const REDDIT_IDENTIFIERS: IdentifierSpec = {
  table: {
    'user.email': { from: 'email', normalise: 'email', hash: true },
    'user.phone_number': { from: 'phone', normalise: 'phone', hash: true },
    'user.external_id': { from: ['external_id', 'id'], normalise: 'externalId', hash: true },
  },
  forms: { email: {}, phone: 'e164', externalId: {} },
};

/**
 * Reddit's canonical e-mail before hashing: lower-cased, everything from the first `+` of
 * the local part removed, then every character of the local part that is not an ASCII letter
 * or digit removed.
 * Null when it is not an address.
 * @example redditCanonicalEmail('Al.ice$+Apple@Example.Com') // 'alice@example.com'
 */
export function redditCanonicalEmail(raw: string): string | null {
  const email = normaliseEmail(raw);
  if (email === null) return null;
  const at = email.lastIndexOf('@');
  const plus = email.indexOf('+');
  const local = (plus >= 0 && plus < at ? email.slice(0, plus) : email.slice(0, at)).replace(/[^a-z0-9]/g, '');
  return local === '' ? null : `${local}@${email.slice(at + 1)}`;
}

/**
 * The `user.email` Reddit gets for one user value: a digest passes through lower-cased,
 * an address is canonicalised and hashed; undefined when there is none.
 * @example redditEmailHash('alice@example.com') // 'ff8d9819fc0e12bf0d24892e45987e249a28dce836a85cad60e28eaaa8c6d976'
 */
export function redditEmailHash(raw: unknown): string | undefined {
  const value = Array.isArray(raw) ? raw.find((v) => typeof v === 'string' && v.trim() !== '') : raw;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  if (isSha256Hex(value)) return value.trim().toLowerCase();
  const canonical = redditCanonicalEmail(value);
  return canonical === null ? undefined : sha256Hex(canonical);
}

/**
 * The IP address before hashing: trimmed; an IPv6 address in its canonical text
 * (lower-case, zeros compressed, RFC 5952 as the WHATWG URL parser writes it), so the same
 * address hashes alike however the client wrote it.
 * @example normaliseIp(' 2A02:2F0E:1234:0:0:0:0:1 ') // '2a02:2f0e:1234::1'
 */
export function normaliseIp(raw: string): string {
  const ip = raw.trim();
  if (!ip.includes(':')) return ip;
  try {
    return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return ip.toLowerCase();
  }
}

/** `ip_address` as Reddit gets it: a digest passes through, an address is hashed. */
export function redditIpHash(raw: string): string {
  return isSha256Hex(raw) ? raw.trim().toLowerCase() : sha256Hex(normaliseIp(raw));
}

/**
 * The `_rdt_uuid` cookie the Reddit Pixel sets: `<ms timestamp>.<uuid>`, sent as `user.uuid`.
 * @example parseRdtUuid('1677712978045.b8f7eb7d-b357-437b-8bd3-e1c8166c7132') // the same
 */
export function parseRdtUuid(value: string): string | undefined {
  const v = value.trim();
  return /^\d{10,16}\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v) ? v : undefined;
}

export const REDDIT_ATTRIBUTION: AttributionSpec = {
  ids: {
    rdt_cid: [{ param: 'rdt_cid' }],
    rdt_uuid: [{ cookie: '_rdt_uuid', parse: parseRdtUuid }],
  },
};
