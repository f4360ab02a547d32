// Sends one platform request of a destination configured with OAuth: with a bearer token
// from the shared cache, and when the platform answers 401 (the token expired early or was
// revoked), once more with a fresh token before the answer is judged. A destination whose
// token cannot be had sends nothing: the exchange's failure is the attempt's outcome.
import { oauthCredentials, type OAuthCredentials } from '../../destinations/oauth-settings.ts';
import type { DestinationPlugin, OutboundRequest } from '../../destinations/types.ts';
import type { SendResult } from '../http-sender.ts';
import type { TokenCache, TokenLookup } from './token-cache.ts';

export interface AuthorizedSend {
  result: SendResult;
  /** The request as it last went out (its token set); null when no token could be had. */
  sent: OutboundRequest | null;
  /** The token endpoint refused the grant: the destination waits for new credentials. */
  reauthorize: boolean;
}

const withToken = (req: OutboundRequest, token: string): OutboundRequest => ({
  ...req,
  headers: { ...req.headers, authorization: `Bearer ${token}` },
});

function noToken(lookup: Exclude<TokenLookup, { kind: 'token' }>, latencyMs: number): AuthorizedSend {
  return {
    result: { kind: 'error', errorClass: 'oauth', message: lookup.message, latencyMs },
    sent: null,
    reauthorize: lookup.kind === 'reauthorize',
  };
}

/**
 * @example
 * const r = await sendAuthorized(tokens, dest.id, credentials, unit.request, (req) => sender.send(req, signal));
 * if (r.reauthorize) pause(dest, 'reauthorize');
 */
export async function sendAuthorized(
  tokens: TokenCache, destinationId: string, credentials: OAuthCredentials, request: OutboundRequest,
  send: (req: OutboundRequest) => Promise<SendResult>,
): Promise<AuthorizedSend> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const first = await tokens.get(destinationId, credentials);
  if (first.kind !== 'token') return noToken(first, elapsed());
  const sent = withToken(request, first.accessToken);
  const result = await send(sent);
  if (result.kind !== 'response' || result.response.status !== 401) return { result, sent, reauthorize: false };
  if (!tokens.invalidate(destinationId, first.accessToken)) return { result, sent, reauthorize: false };
  const fresh = await tokens.get(destinationId, credentials);
  if (fresh.kind !== 'token') return noToken(fresh, elapsed());
  // Another 401 moments ago replaced the token already: this one is judged as it is.
  if (fresh.accessToken === first.accessToken) return { result, sent, reauthorize: false };
  const again = withToken(request, fresh.accessToken);
  return { result: await send(again), sent: again, reauthorize: false };
}

/**
 * The lane's way to send: a destination configured with OAuth (its plugin declares `oauth`
 * and its settings give the OAuth keys) as above; any other request as it was built.
 */
export async function sendForDestination(
  tokens: TokenCache | undefined, dest: { id: string; settings: Readonly<Record<string, unknown>> }, plugin: Pick<DestinationPlugin, 'oauth'>,
  request: OutboundRequest, send: (req: OutboundRequest) => Promise<SendResult>,
): Promise<AuthorizedSend> {
  const credentials = tokens === undefined ? null : oauthCredentials(plugin.oauth, dest.settings);
  if (credentials === null) return { result: await send(request), sent: request, reauthorize: false };
  return sendAuthorized(tokens!, dest.id, credentials, request, send);
}
