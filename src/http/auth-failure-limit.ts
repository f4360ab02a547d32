// The limit before authentication: failed authentications (unknown script id, wrong or
// missing token, a custom endpoint's extra check refused) are counted per client address
// in a token bucket of `perMinute` tokens refilled continuously. An address with no token
// left is answered 429 RATE_LIMITED with Retry-After before any credential is looked at,
// so spraying random script ids costs one 429 each, not a database lookup. Valid requests
// never take a token.
//
// While an address is blocked, a request for an account the server has seen in the last
// second may still go through (see authenticate.ts), so a good client behind a busy address
// keeps going while a sprayer waits. That pass is only for an account that has not failed
// from this address lately: failures naming a script id are also counted per (address,
// script id), and an account with a failure still in its bucket is blocked with its
// address. Guessing tokens for a real script id is thus held to the same budget as
// guessing script ids. Memory is bounded: at most `maxKeys` buckets (addresses and
// pairs), least recently seen dropped first.

export interface AuthFailureLimiter {
  /**
   * Seconds until `ip` may try again; 0 when it may now. `scriptId`: a real account the
   * request names, which passes a blocked address unless it failed from there lately.
   */
  blockedFor(ip: string, scriptId?: string): number;
  /** Records one failed authentication from `ip`, naming `scriptId` when the request named a real account. */
  fail(ip: string, scriptId?: string): void;
  /** Buckets tracked (bounded by maxKeys). */
  readonly size: number;
}

export const DEFAULT_AUTH_FAILURES_PER_MINUTE = 60;

/** The pair's key; NUL appears in neither an address nor a script id. */
const pairKey = (ip: string, scriptId: string) => `${ip}\u0000${scriptId}`;

export function createAuthFailureLimiter(opts: { perMinute?: number; now?: () => number; maxKeys?: number } = {}): AuthFailureLimiter {
  const perMinute = opts.perMinute ?? DEFAULT_AUTH_FAILURES_PER_MINUTE;
  const perMs = perMinute / 60_000;
  const now = opts.now ?? Date.now;
  const maxKeys = opts.maxKeys ?? 50_000;
  const buckets = new Map<string, { tokens: number; at: number }>();

  /** The bucket refilled to now, moved to the most-recent end of the map. */
  function bucket(key: string): { tokens: number; at: number } | undefined {
    const b = buckets.get(key);
    if (!b) return undefined;
    const t = now();
    b.tokens = Math.min(perMinute, b.tokens + (t - b.at) * perMs);
    b.at = t;
    buckets.delete(key);
    if (b.tokens >= perMinute) return undefined; // full again: nothing to remember
    buckets.set(key, b);
    return b;
  }

  function take(key: string): void {
    const b = bucket(key) ?? { tokens: perMinute, at: now() };
    b.tokens = Math.max(0, b.tokens - 1);
    buckets.delete(key);
    buckets.set(key, b);
    while (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value!);
  }

  return {
    blockedFor(ip, scriptId) {
      const b = bucket(ip);
      if (!b || b.tokens >= 1) return 0;
      // A real account that has not failed from here lately passes the blocked address.
      if (scriptId !== undefined && bucket(pairKey(ip, scriptId)) === undefined) return 0;
      return Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000));
    },
    fail(ip, scriptId) {
      take(ip);
      if (scriptId !== undefined) take(pairKey(ip, scriptId));
    },
    get size() {
      return buckets.size;
    },
  };
}
