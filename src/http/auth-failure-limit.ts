// The limit before authentication: failed authentications (unknown script id, wrong or
// missing token, a custom endpoint's extra check refused) are counted per client address
// in a token bucket of `perMinute` tokens refilled continuously. An address with no token
// left is answered 429 RATE_LIMITED with Retry-After before any credential is looked at,
// so spraying random script ids costs one 429 each, not a database lookup. Valid requests
// never take a token, and while an address is blocked, requests for an account the
// server has seen in the last second still go through (see authenticate.ts). Memory is bounded: at most `maxKeys` addresses, least recently seen
// dropped first.

export interface AuthFailureLimiter {
  /** Seconds until `ip` may try again; 0 when it may now. */
  blockedFor(ip: string): number;
  /** Records one failed authentication from `ip`. */
  fail(ip: string): void;
  /** Addresses tracked (bounded by maxKeys). */
  readonly size: number;
}

export const DEFAULT_AUTH_FAILURES_PER_MINUTE = 60;

export function createAuthFailureLimiter(opts: { perMinute?: number; now?: () => number; maxKeys?: number } = {}): AuthFailureLimiter {
  const perMinute = opts.perMinute ?? DEFAULT_AUTH_FAILURES_PER_MINUTE;
  const perMs = perMinute / 60_000;
  const now = opts.now ?? Date.now;
  const maxKeys = opts.maxKeys ?? 50_000;
  const buckets = new Map<string, { tokens: number; at: number }>();

  /** The bucket refilled to now, moved to the most-recent end of the map. */
  function bucket(ip: string): { tokens: number; at: number } | undefined {
    const b = buckets.get(ip);
    if (!b) return undefined;
    const t = now();
    b.tokens = Math.min(perMinute, b.tokens + (t - b.at) * perMs);
    b.at = t;
    buckets.delete(ip);
    if (b.tokens >= perMinute) return undefined; // full again: nothing to remember
    buckets.set(ip, b);
    return b;
  }

  return {
    blockedFor(ip) {
      const b = bucket(ip);
      if (!b || b.tokens >= 1) return 0;
      return Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000));
    },
    fail(ip) {
      const b = bucket(ip) ?? { tokens: perMinute, at: now() };
      b.tokens = Math.max(0, b.tokens - 1);
      buckets.delete(ip);
      buckets.set(ip, b);
      while (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value!);
    },
    get size() {
      return buckets.size;
    },
  };
}
