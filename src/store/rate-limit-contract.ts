// The rate-limit contracts a bucket store fulfils: in memory per process (src/http/rate-limit.ts,
// src/customers/rate-limiter.ts) or shared by every instance on PostgreSQL
// (postgres/rate-buckets.ts).

export interface TokenBucketLimiter {
  /**
   * Takes `count` tokens (default 1) from `key`'s bucket, refilled at `perSecond` up to
   * `capacity` (default `perSecond` × the limiter's burst seconds); returns 0 when allowed,
   * else the whole seconds until they are free (at least 1). A count above the capacity
   * passes on a full bucket (or one a token short of full: a batch's request token is taken
   * before its events) and leaves it in debt, so a batch larger than the burst is slowed,
   * never refused forever.
   */
  take(key: string, perSecond: number, count?: number, capacity?: number): number | Promise<number>;
}

/**
 * Tokens a bucket must hold for a take of `count` (both bucket stores): a take larger than
 * the bucket passes on a full bucket, or one a token short of full (batch intake takes its
 * request's token before the body is read, the rest once the events are counted).
 */
export const neededFor = (count: number, capacity: number): number => Math.min(count, Math.max(1, capacity - 1));

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
