// page_location and page_referrer as GA4 may receive them: Google requires page URLs free of
// personal data ("Best practices to avoid sending PII"), and the payload spec warns that query
// strings may hold it. The userinfo (`user:password@` before the host) is left out: it is a
// login, never part of the page. A host, path segment, query or fragment name or value that
// looks like an identifier (identifier-like.ts) is replaced by `(redacted)`, as GA4's own web
// data redaction writes it; everything else is kept byte for byte.
import type { IdentifierTest } from './identifier-like.ts';

export const PAGE_URL_PARAMS = ['page_location', 'page_referrer'] as const;
const REDACTED = '(redacted)';

/** `scheme://` (or a scheme-relative `//`), then the authority up to the path; `\` ends it as it does for browsers. */
const AUTHORITY = /^((?:[a-z][a-z0-9+.-]*:)?\/\/)([^/\\]*)/i;

export function redactUrl(url: string, isIdentifier: IdentifierTest): { url: string; redacted: boolean } {
  let redacted = false;
  // `+` is a space in a query and is read as one everywhere: a name written `Jane+Doe` in a path is as telling.
  const check = (raw: string, asHost = false): string => {
    if (raw === '' || !isIdentifier(raw.replace(/\+/g, ' '), asHost ? 'none' : 'any')) return raw;
    redacted = true;
    return REDACTED;
  };
  const pairs = (part: string) => part.split('&').map((pair) => {
    const eq = pair.indexOf('=');
    return eq === -1 ? check(pair) : `${check(pair.slice(0, eq))}=${check(pair.slice(eq + 1))}`;
  }).join('&');

  const hashAt = url.indexOf('#');
  const beforeHash = hashAt === -1 ? url : url.slice(0, hashAt);
  const queryAt = beforeHash.indexOf('?');
  const base = queryAt === -1 ? beforeHash : beforeHash.slice(0, queryAt);
  const [authority = '', scheme = '', hostPart = ''] = AUTHORITY.exec(base) ?? [];
  const at = hostPart.lastIndexOf('@');
  if (at !== -1) redacted = true;
  // Host names are not phones (an address such as 192.168.100.100 has 12 digits).
  const host = hostPart === '' ? '' : check(hostPart.slice(at + 1), true);
  const path = base.slice(authority.length).split('/').map((segment) => check(segment)).join('/');
  const query = queryAt === -1 ? '' : `?${pairs(beforeHash.slice(queryAt + 1))}`;
  const fragment = hashAt === -1 ? '' : `#${pairs(url.slice(hashAt + 1))}`;
  return redacted ? { url: scheme + host + path + query + fragment, redacted } : { url, redacted };
}
