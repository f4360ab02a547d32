// The rate-limit contracts a bucket store fulfils: in memory per process (src/http/rate-limit.ts,
// src/customers/rate-limiter.ts) or shared by every instance on PostgreSQL
// (postgres/rate-buckets.ts).

export interface TokenBucketLimiter {
  /**
   * Takes `count` tokens (default 1) from `key`'s bucket, refilled at `perSecond` up to
   * `capacity` (default `perSecond` × the limiter's burst seconds); returns 0 when allowed,
   * else the whole seconds until they are free (at least 1). A count above the capacity
   * passes on a full bucket and leaves it in debt, so a batch larger than the burst is
   * slowed, never refused forever.
   */
  take(key: string, perSecond: number, count?: number, capacity?: number): number | Promise<number>;
}

/** A custom endpoint's limit. */
export interface RateLimit {
  perMinute: number;
  /** Bucket size: requests allowed at once after a quiet spell. */
  burst: number;
}

export type RateDecision = { ok: true } | { ok: false; retryAfterSeconds: number };

export interface RateLimiter {
  /** Takes one token from `key`'s bucket if it has one. */
  take(key: string, limit: RateLimit): RateDecision | Promise<RateDecision>;
}
