// Token buckets in memory, one per (account, endpoint, env): `burst` tokens at most,
// refilled at `perMinute` per minute. Per process; on PostgreSQL the server uses the shared
// buckets instead (src/store/postgres/rate-buckets.ts), so the limit holds across instances.

export interface RateLimit {
  perMinute: number;
  /** Bucket size: requests allowed at once after a quiet spell. */
  burst: number;
}

/** The documented test limit, 1,000 requests per minute, unless endpoint.json says otherwise. */
export const TEST_RATE_DEFAULT: RateLimit = { perMinute: 1000, burst: 1000 };

export type RateDecision = { ok: true } | { ok: false; retryAfterSeconds: number };

export interface RateLimiter {
  /** Takes one token from `key`'s bucket if it has one. */
  take(key: string, limit: RateLimit): RateDecision | Promise<RateDecision>;
}

interface Bucket {
  tokens: number;
  at: number;
  limit: RateLimit;
}

const MAX_BUCKETS = 50_000;

const level = (b: Bucket, t: number): number =>
  Math.min(b.limit.burst, b.tokens + (Math.max(0, t - b.at) * b.limit.perMinute) / 60_000);

/** The in-memory limiter answers at once. */
export function createRateLimiter(opts: { now?: () => number } = {}): { take(key: string, limit: RateLimit): RateDecision } {
  const now = opts.now ?? Date.now;
  const buckets = new Map<string, Bucket>();

  /** Full buckets are indistinguishable from new ones, so they can go. */
  function sweep(t: number): void {
    for (const [key, b] of buckets) if (level(b, t) >= b.limit.burst) buckets.delete(key);
    if (buckets.size >= MAX_BUCKETS) buckets.clear();
  }

  return {
    take(key, limit) {
      const t = now();
      let b = buckets.get(key);
      if (!b) {
        if (buckets.size >= MAX_BUCKETS) sweep(t);
        b = { tokens: limit.burst, at: t, limit };
        buckets.set(key, b);
      } else {
        b.limit = limit;
        b.tokens = level(b, t);
        b.at = Math.max(b.at, t);
      }
      if (b.tokens >= 1) {
        b.tokens -= 1;
        return { ok: true };
      }
      const msUntilToken = ((1 - b.tokens) * 60_000) / limit.perMinute;
      // Whole milliseconds first: float dust must not turn 20 s into 21.
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(Math.round(msUntilToken) / 1000)) };
    },
  };
}
