// The one place access tokens come from for destinations configured with OAuth: per
// destination, the token its refresh token was last exchanged for, kept until shortly before
// its `expires_in`. Each process keeps its own (tokens are never stored), and several
// instances sharing a database stay out of each other's way:
// - single flight: while an exchange runs for a destination, every caller awaits that one;
// - early and jittered: a token is replaced 5–10 min (at most half its lifetime) before it
//   expires, at a random point per process, and callers meanwhile keep using the old one,
//   so instances started together do not refresh together and no send waits at the boundary;
// - failures are remembered: a refused grant (`invalid_grant`) until the credentials change,
//   any other failure for `failureHoldMs`, so a backlog does not hammer the token endpoint.
// A changed config (another refresh token, client or token URL) starts afresh.
import type { OAuthCredentials } from '../../destinations/oauth-settings.ts';
import type { OutboundRequest } from '../../destinations/types.ts';
import type { SendResult } from '../http-sender.ts';
import { readTokenAnswer, tokenRequest, type TokenAnswer } from './token-endpoint.ts';

const MINUTE = 60_000;
/** A token is replaced this long before it expires, plus up to EARLY_JITTER_MS more at random. */
export const EARLY_MS = 5 * MINUTE;
export const EARLY_JITTER_MS = 5 * MINUTE;
/** A failed exchange (other than a refused grant) answers for the destination this long. */
export const FAILURE_HOLD_MS = 10_000;
/** After a 401 made us replace a token, another 401 within this time is judged, not refreshed again. */
export const FORCED_REFRESH_GAP_MS = 30_000;

/** What `get` gives: a token to send with, or the exchange's failure. */
export type TokenLookup = { kind: 'token'; accessToken: string } | Exclude<TokenAnswer, { kind: 'token' }>;

export interface TokenCacheOptions {
  /** Sends a token request: the delivery sender, so it passes the same SSRF guard and pools. */
  send(req: OutboundRequest): Promise<SendResult>;
  clock?: () => number;
  /** [0, 1), for the early-refresh jitter. */
  random?: () => number;
  failureHoldMs?: number;
}

export interface TokenCache {
  /** A usable access token for the destination, or why there is none. Never throws. */
  get(destinationId: string, credentials: OAuthCredentials): Promise<TokenLookup>;
  /**
   * The platform refused `accessToken` (401). True when a retry may help: the token is
   * forgotten (a newer one is fetched by the next `get`) or was replaced already; false when
   * a 401 replaced this destination's token moments ago, so this one is judged as it is.
   */
  invalidate(destinationId: string, accessToken: string): boolean;
  /** Forgets destinations no longer configured (they keep no memory). */
  retain(destinationIds: ReadonlySet<string>): void;
}

interface Entry {
  /** The credentials this entry is for, joined: another value starts a new entry. */
  key: string;
  token?: { value: string; refreshAt: number; expiresAt: number };
  failure?: { lookup: Exclude<TokenLookup, { kind: 'token' }>; until: number };
  exchange?: Promise<TokenLookup>;
  forcedAt: number;
}

/**
 * @example
 * const tokens = createTokenCache({ send: (req) => sender.send(req) });
 * const t = await tokens.get(dest.id, credentials); // { kind: 'token', accessToken } | { kind: 'reauthorize' | 'failed', message }
 */
export function createTokenCache(opts: TokenCacheOptions): TokenCache {
  const clock = opts.clock ?? Date.now;
  const random = opts.random ?? Math.random;
  const failureHoldMs = opts.failureHoldMs ?? FAILURE_HOLD_MS;
  const entries = new Map<string, Entry>();

  function entryFor(destinationId: string, c: OAuthCredentials): Entry {
    const key = [c.tokenUrl, c.clientId, c.clientSecret, c.refreshToken].join('\n');
    let e = entries.get(destinationId);
    if (e === undefined || e.key !== key) entries.set(destinationId, (e = { key, forcedAt: -Infinity }));
    return e;
  }

  /** One exchange per entry at a time; its result is stored only if the entry is still current. */
  function exchange(e: Entry, c: OAuthCredentials): Promise<TokenLookup> {
    e.exchange ??= opts.send(tokenRequest(c)).then(readTokenAnswer, (err: unknown) => ({ kind: 'failed' as const, message: `token request failed: ${(err as Error).message}` }))
      .then((answer): TokenLookup => {
        e.exchange = undefined;
        const now = clock();
        if (answer.kind === 'token') {
          const early = Math.min(answer.expiresInMs / 2, EARLY_MS + random() * EARLY_JITTER_MS);
          e.token = { value: answer.accessToken, refreshAt: now + answer.expiresInMs - early, expiresAt: now + answer.expiresInMs };
          e.failure = undefined;
          return { kind: 'token', accessToken: answer.accessToken };
        }
        e.failure = { lookup: answer, until: answer.kind === 'reauthorize' ? Infinity : now + failureHoldMs };
        return answer;
      });
    return e.exchange;
  }

  return {
    async get(destinationId, c) {
      const e = entryFor(destinationId, c);
      const now = clock();
      const held = e.failure !== undefined && now < e.failure.until ? e.failure.lookup : undefined;
      if (e.token !== undefined && now < e.token.expiresAt) {
        // Due for replacement: one exchange in the background, the current token meanwhile.
        if (now >= e.token.refreshAt && held === undefined) void exchange(e, c);
        return { kind: 'token', accessToken: e.token.value };
      }
      if (held !== undefined) return held;
      return exchange(e, c);
    },
    invalidate(destinationId, accessToken) {
      const e = entries.get(destinationId);
      if (e === undefined || e.token?.value !== accessToken) return true;
      const now = clock();
      if (now - e.forcedAt < FORCED_REFRESH_GAP_MS) return false;
      e.forcedAt = now;
      e.token = undefined;
      return true;
    },
    retain(destinationIds) {
      for (const id of entries.keys()) if (!destinationIds.has(id)) entries.delete(id);
    },
  };
}
