// page_location and page_referrer as GA4 may receive them: Google requires page URLs free of
// personal data ("Best practices to avoid sending PII"), and the payload spec warns that query
// strings may hold it. A path segment, query or fragment value that looks like an identifier
// (identifier-like.ts) is replaced by `(redacted)`, as GA4's own web data redaction writes it;
// everything else is kept byte for byte.
import type { IdentifierTest } from './identifier-like.ts';

export const PAGE_URL_PARAMS = ['page_location', 'page_referrer'] as const;
const REDACTED = '(redacted)';

export function redactUrl(url: string, isIdentifier: IdentifierTest): { url: string; redacted: boolean } {
  let redacted = false;
  const check = (raw: string): string => {
    if (raw === '' || !isIdentifier(decode(raw))) return raw;
    redacted = true;
    return REDACTED;
  };
  const pairs = (part: string) => part.split('&').map((pair) => {
    const eq = pair.indexOf('=');
    return eq === -1 ? check(pair) : `${pair.slice(0, eq)}=${check(pair.slice(eq + 1))}`;
  }).join('&');

  const hashAt = url.indexOf('#');
  const beforeHash = hashAt === -1 ? url : url.slice(0, hashAt);
  const queryAt = beforeHash.indexOf('?');
  const base = queryAt === -1 ? beforeHash : beforeHash.slice(0, queryAt);
  const authority = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i.exec(base)?.[0] ?? '';
  const path = base.slice(authority.length).split('/').map(check).join('/');
  const query = queryAt === -1 ? '' : `?${pairs(beforeHash.slice(queryAt + 1))}`;
  const fragment = hashAt === -1 ? '' : `#${pairs(url.slice(hashAt + 1))}`;
  return redacted ? { url: authority + path + query + fragment, redacted } : { url, redacted };
}

/** A URL component as text: `+` as a space, percent-escapes decoded (left as is when malformed). */
function decode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}
