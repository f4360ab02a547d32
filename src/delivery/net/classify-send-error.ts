// Maps a failed HTTP attempt (Node socket, DNS, TLS or undici error) to a coarse error
// class and a fixed message. Messages never carry addresses, ports or stack details:
// they are stored with the attempt and shown to operators.
import { BLOCKED_ADDRESS_CODE } from './guarded-lookup.ts';

/** `oauth`: no access token could be had for the request (src/delivery/oauth/), so it was not sent. */
export type SendErrorClass = 'timeout' | 'connect' | 'dns' | 'tls' | 'blocked' | 'reset' | 'oauth' | 'other';

export interface ClassifiedError {
  errorClass: SendErrorClass;
  message: string;
}

const BY_CODE = new Map<string, ClassifiedError>(Object.entries({
  ENOTFOUND: { errorClass: 'dns', message: 'DNS lookup failed: host not found' },
  EAI_NONAME: { errorClass: 'dns', message: 'DNS lookup failed: host not found' },
  EAI_NODATA: { errorClass: 'dns', message: 'DNS lookup failed: host has no address' },
  EAI_AGAIN: { errorClass: 'dns', message: 'DNS lookup failed: temporary resolver failure' },
  EAI_FAIL: { errorClass: 'dns', message: 'DNS lookup failed' },
  ECONNREFUSED: { errorClass: 'connect', message: 'connection refused' },
  EHOSTUNREACH: { errorClass: 'connect', message: 'host unreachable' },
  ENETUNREACH: { errorClass: 'connect', message: 'network unreachable' },
  EHOSTDOWN: { errorClass: 'connect', message: 'host down' },
  EADDRNOTAVAIL: { errorClass: 'connect', message: 'cannot assign address' },
  ECONNRESET: { errorClass: 'reset', message: 'connection reset by peer' },
  EPIPE: { errorClass: 'reset', message: 'connection closed while sending' },
  UND_ERR_SOCKET: { errorClass: 'reset', message: 'connection closed by peer' },
  UND_ERR_CLOSED: { errorClass: 'reset', message: 'connection closed' },
  ETIMEDOUT: { errorClass: 'timeout', message: 'connect timed out' },
  UND_ERR_CONNECT_TIMEOUT: { errorClass: 'timeout', message: 'connect timed out' },
  UND_ERR_HEADERS_TIMEOUT: { errorClass: 'timeout', message: 'timed out waiting for response headers' },
  UND_ERR_BODY_TIMEOUT: { errorClass: 'timeout', message: 'timed out reading response body' },
  UND_ERR_HEADERS_OVERFLOW: { errorClass: 'other', message: 'response headers too large' },
}));

// OpenSSL and Node certificate error codes (ERR_SSL_*, ERR_TLS_*, CERT_*, …).
const TLS_CODE = /^(ERR_SSL_|ERR_TLS_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|EPROTO$)/;

/** The error and its `cause` chain (undici and fetch-style wrappers), outermost first. */
function chainOf(err: unknown): Array<{ code: string; message: string }> {
  const chain: Array<{ code: string; message: string }> = [];
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string') chain.push({ code, message: typeof message === 'string' ? message : '' });
  }
  return chain;
}

/** How an attempt ended when it did not produce a response. */
export function classifySendError(err: unknown, ctx: { deadlineExceeded: boolean; callerAborted: boolean }): ClassifiedError {
  if (ctx.deadlineExceeded) return { errorClass: 'timeout', message: 'total request time limit exceeded' };
  if (ctx.callerAborted) return { errorClass: 'other', message: 'request aborted' };
  for (const { code, message } of chainOf(err)) {
    // BlockedAddressError's message names only the range, never the address.
    if (code === BLOCKED_ADDRESS_CODE) return { errorClass: 'blocked', message };
    const known = BY_CODE.get(code);
    if (known) return known;
    if (TLS_CODE.test(code)) return { errorClass: 'tls', message: `TLS handshake failed (${code})` };
    if (code.startsWith('HPE_')) return { errorClass: 'other', message: 'invalid HTTP response' };
  }
  return { errorClass: 'other', message: 'request failed' };
}
