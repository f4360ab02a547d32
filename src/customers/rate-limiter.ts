// Custom endpoints' limits: a token bucket per (account, endpoint, env), `burst` tokens at
// most, refilled at `perMinute` per minute — the intake's bucket (src/http/rate-limit.ts)
// rated per minute. Per process; on PostgreSQL the server uses the shared buckets instead
// (src/store/postgres/rate-buckets.ts), so the limit holds across instances.
import { createTokenBuckets } from '../http/rate-limit.ts';
import type { RateDecision, RateLimit, RateLimiter } from '../store/rate-limit-contract.ts';

export type { RateDecision, RateLimit, RateLimiter };

/** The documented test limit, 1,000 requests per minute, unless endpoint.json says otherwise. */
export const TEST_RATE_DEFAULT: RateLimit = { perMinute: 1000, burst: 1000 };

/** Buckets kept before full ones are swept (and, past it, all). */
const MAX_BUCKETS = 50_000;

/** The in-memory limiter answers at once: the service's token bucket, rated per minute. */
export function createRateLimiter(opts: { now?: () => number } = {}): { take(key: string, limit: RateLimit): RateDecision } {
  const buckets = createTokenBuckets({ now: opts.now, maxKeys: MAX_BUCKETS });
  return {
    take(key, limit) {
      const wait = buckets.take(key, limit.perMinute / 60, 1, limit.burst);
      return wait === 0 ? { ok: true } : { ok: false, retryAfterSeconds: wait };
    },
  };
}
