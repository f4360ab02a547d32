// Per-account intake rate limit: a token bucket per script id, refilled continuously.
// Over it, endpoints 1–3 answer 429 with Retry-After, so one noisy account cannot
// starve the others. In memory per process here; on PostgreSQL the buckets live in the
// database and hold across instances (src/store/postgres/rate-buckets.ts).
import type { Next } from 'koa';
import { AppError, unavailable } from '../errors.ts';
import type { AppContext } from './types.ts';

export interface TokenBucketLimiter {
  /**
   * Takes `count` tokens (default 1); returns 0 when allowed, else the seconds until they are free.
   * A count above the bucket's capacity passes on a full bucket and leaves it in debt, so a
   * batch larger than the burst is slowed, never refused forever.
   */
  take(key: string, perSecond: number, count?: number): number | Promise<number>;
}

export function createTokenBuckets(opts: { now?: () => number; burstSeconds?: number; maxKeys?: number } = {}): TokenBucketLimiter {
  const now = opts.now ?? Date.now;
  const burst = opts.burstSeconds ?? 2;
  const maxKeys = opts.maxKeys ?? 100_000;
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    take(key, perSecond, count = 1) {
      const t = now();
      const capacity = perSecond * burst;
      let b = buckets.get(key);
      if (!b) {
        if (buckets.size >= maxKeys) buckets.clear();
        b = { tokens: capacity, at: t };
        buckets.set(key, b);
      } else {
        b.tokens = Math.min(capacity, b.tokens + ((t - b.at) / 1000) * perSecond);
        b.at = t;
      }
      const needed = Math.min(count, capacity);
      if (b.tokens >= needed) {
        b.tokens -= count;
        return 0;
      }
      return Math.max(1, Math.ceil((needed - b.tokens) / perSecond));
    },
  };
}

/** Takes from a bucket; a shared bucket store that cannot answer makes the request 503, never a 500. */
export async function takeOrUnavailable(limiter: TokenBucketLimiter, key: string, perSecond: number, count = 1): Promise<number> {
  try {
    return await limiter.take(key, perSecond, count);
  } catch (err) {
    throw unavailable(err, 'check the rate limit');
  }
}

/** Middleware after authentication: limits by the account's own rate or the default. */
export function rateLimit(opts: { limiter: TokenBucketLimiter; defaultPerSecond: number }) {
  return async function rateLimitMiddleware(ctx: AppContext, next: Next): Promise<void> {
    const account = ctx.state.account!;
    const wait = await takeOrUnavailable(opts.limiter, account.scriptId, account.rateLimit ?? opts.defaultPerSecond);
    if (wait > 0) {
      throw new AppError('RATE_LIMITED', 429, `More than ${account.rateLimit ?? opts.defaultPerSecond} requests per second for this account; retry after ${wait} s`, { retryAfter: wait });
    }
    await next();
  };
}
