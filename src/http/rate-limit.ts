// Per-account intake rate limit: a token bucket per script id, refilled continuously.
// Over it, endpoints 1–3 answer 429 with Retry-After, so one noisy account cannot
// starve the others. In memory per process here; on PostgreSQL the buckets live in the
// database and hold across instances (src/store/postgres/rate-buckets.ts).
import type { Next } from 'koa';
import { AppError, unavailable } from '../errors.ts';
import type { AppContext } from './types.ts';

import type { TokenBucketLimiter } from '../store/rate-limit-contract.ts';

export type { TokenBucketLimiter };

/** In memory, the answer is immediate. */
export interface MemoryTokenBuckets extends TokenBucketLimiter {
  take(key: string, perSecond: number, count?: number, capacity?: number): number;
}

interface Bucket {
  tokens: number;
  at: number;
  capacity: number;
  perSecond: number;
}

/** Tokens in `b` at `t`; a clock that steps back adds none. */
const level = (b: Bucket, t: number): number => Math.min(b.capacity, b.tokens + (Math.max(0, t - b.at) / 1000) * b.perSecond);

/** The one in-memory token bucket of the service: intake (per account) and custom endpoints (per account, endpoint, env). */
export function createTokenBuckets(opts: { now?: () => number; burstSeconds?: number; maxKeys?: number } = {}): MemoryTokenBuckets {
  const now = opts.now ?? Date.now;
  const burst = opts.burstSeconds ?? 2;
  const maxKeys = opts.maxKeys ?? 100_000;
  const buckets = new Map<string, Bucket>();

  /** Full buckets are indistinguishable from new ones, so they can go; past the cap everything does. */
  function sweep(t: number): void {
    for (const [key, b] of buckets) if (level(b, t) >= b.capacity) buckets.delete(key);
    if (buckets.size >= maxKeys) buckets.clear();
  }

  return {
    take(key, perSecond, count = 1, capacity = perSecond * burst) {
      const t = now();
      let b = buckets.get(key);
      if (!b) {
        if (buckets.size >= maxKeys) sweep(t);
        b = { tokens: capacity, at: t, capacity, perSecond };
        buckets.set(key, b);
      } else {
        b.capacity = capacity;
        b.perSecond = perSecond;
        b.tokens = level(b, t);
        b.at = Math.max(b.at, t);
      }
      const needed = Math.min(count, capacity);
      if (b.tokens >= needed) {
        b.tokens -= count;
        return 0;
      }
      // Whole milliseconds first: float dust must not turn 20 s into 21.
      return Math.max(1, Math.ceil(Math.round(((needed - b.tokens) / perSecond) * 1000) / 1000));
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
