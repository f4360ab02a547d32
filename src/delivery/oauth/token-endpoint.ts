// One refresh-token grant (RFC 6749 §6) as Google and LinkedIn document it: a form-encoded
// POST with the client's id and secret in the body, answered with `access_token` and
// `expires_in` (§5.1) or a JSON error whose `error` code says why (§5.2). Pure: the request
// to send, and what an answer means. Token and secrets never appear in a message.
import type { OutboundRequest } from '../../destinations/types.ts';
import type { OAuthCredentials } from '../../destinations/oauth-settings.ts';
import type { SendResult } from '../http-sender.ts';

/** A token answer without `expires_in` (RECOMMENDED only) is taken to live this long. */
export const DEFAULT_LIFETIME_S = 3_600;

export type TokenAnswer =
  | { kind: 'token'; accessToken: string; expiresInMs: number }
  /**
   * The grant is dead (`invalid_grant`: expired, revoked, or issued to another client):
   * only a person can authorize the app again.
   */
  | { kind: 'reauthorize'; message: string }
  /** Anything else: the endpoint or the network failed, or it refused the client. */
  | { kind: 'failed'; message: string };

export function tokenRequest(c: OAuthCredentials): OutboundRequest {
  const body = new URLSearchParams({
    grant_type: 'refresh_token',
    refresh_token: c.refreshToken,
    client_id: c.clientId,
    client_secret: c.clientSecret,
  }).toString();
  return {
    method: 'POST',
    url: c.tokenUrl,
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body,
    eventIds: [],
  };
}

/** What the token endpoint's answer (or the failure to get one) means. */
export function readTokenAnswer(result: SendResult): TokenAnswer {
  if (result.kind === 'error') return { kind: 'failed', message: `token endpoint unreachable (${result.errorClass}: ${result.message})` };
  const { status, body } = result.response;
  const json = parseObject(body);
  if (status >= 200 && status < 300) {
    const token = json?.access_token;
    if (typeof token !== 'string' || token === '') return { kind: 'failed', message: `token endpoint answered HTTP ${status} without an access_token` };
    const seconds = Number(json?.expires_in);
    const lifetime = Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_LIFETIME_S;
    return { kind: 'token', accessToken: token, expiresInMs: lifetime * 1000 };
  }
  const code = typeof json?.error === 'string' ? json.error.slice(0, 64) : null;
  const description = typeof json?.error_description === 'string' ? `: ${json.error_description.slice(0, 200)}` : '';
  const what = `token endpoint answered HTTP ${status}${code === null ? '' : ` ${code}${description}`}`;
  if (code === 'invalid_grant') return { kind: 'reauthorize', message: `${what} (the refresh token no longer works: authorize the app again and give the new refresh_token)` };
  if (code === 'invalid_client' || code === 'unauthorized_client') return { kind: 'failed', message: `${what} (check client_id and client_secret)` };
  return { kind: 'failed', message: what };
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
