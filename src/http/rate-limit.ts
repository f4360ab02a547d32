// Per-account intake rate limit: a token bucket per script id, refilled continuously.
// Over it, endpoints 1–3 answer 429 with Retry-After, so one noisy account cannot
// starve the others. In memory per process here; on PostgreSQL the buckets live in the
// database and hold across instances (src/store/postgres/rate-buckets.ts).
import type { Next } from 'koa';
import { AppError, unavailable } from '../errors.ts';
import type { AppContext } from './types.ts';
import type { Account } from '../accounts/types.ts';

import { neededFor, type TokenBucketLimiter } from '../store/rate-limit-contract.ts';

export type { TokenBucketLimiter };

/** In memory, the answer is immediate. */
export interface MemoryTokenBuckets extends TokenBucketLimiter {
  take(key: string, perSecond: number, count?: number, capacity?: number): number;
  /**
   * Takes `count` tokens whatever the bucket holds (it may go into debt, and later takes
   * wait for it): for work already done. Returns 0 when the bucket could afford it, else
   * the whole seconds until it is out of debt (at least 1).
   */
  charge(key: string, perSecond: number, count: number, capacity?: number, paid?: number): number;
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

  /** `key`'s bucket refilled to now. */
  function refilled(key: string, perSecond: number, capacity: number): Bucket {
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
    return b;
  }

  return {
    take(key, perSecond, count = 1, capacity = perSecond * burst) {
      const b = refilled(key, perSecond, capacity);
      const needed = neededFor(count, capacity);
      if (b.tokens >= needed) {
        b.tokens -= count;
        return 0;
      }
      return secondsFor(needed - b.tokens, perSecond);
    },
    charge(key, perSecond, count, capacity = perSecond * burst, paid = 0) {
      const b = refilled(key, perSecond, capacity);
      // `paid`: what the same request already took; affordable as if it had all been asked at once.
      const afforded = b.tokens + paid >= neededFor(count + paid, capacity);
      b.tokens -= count;
      return afforded ? 0 : secondsFor(-b.tokens, perSecond);
    },
  };
}

/** Whole seconds until `short` tokens have refilled, at least 1. Whole milliseconds first: float dust must not turn 20 s into 21. */
const secondsFor = (short: number, perSecond: number): number => Math.max(1, Math.ceil(Math.round((short / perSecond) * 1000) / 1000));

/** Takes from a bucket; a shared bucket store that cannot answer makes the request 503, never a 500. */
export async function takeOrUnavailable(limiter: TokenBucketLimiter, key: string, perSecond: number, count = 1): Promise<number> {
  try {
    return await limiter.take(key, perSecond, count);
  } catch (err) {
    throw unavailable(err, 'check the rate limit');
  }
}

export interface AccountRateOptions {
  limiter: TokenBucketLimiter;
  defaultPerSecond: number;
  /** What the account's rate counts, for the 429's message (batch intake counts events). */
  unit?: 'requests' | 'events';
}

/** Takes `count` of the account's tokens (its own rate or the default), or throws 429 RATE_LIMITED with Retry-After. */
export async function takeForAccount(opts: AccountRateOptions, account: Account, count = 1): Promise<void> {
  const perSecond = account.rateLimit ?? opts.defaultPerSecond;
  const wait = await takeOrUnavailable(opts.limiter, account.scriptId, perSecond, count);
  if (wait > 0) {
    throw new AppError('RATE_LIMITED', 429, `More than ${perSecond} ${opts.unit ?? 'requests'} per second for this account; retry after ${wait} s`, { retryAfter: wait });
  }
}

/** Middleware after authentication and before the body is read: one token per request. */
export function rateLimit(opts: AccountRateOptions) {
  return async function rateLimitMiddleware(ctx: AppContext, next: Next): Promise<void> {
    await takeForAccount(opts, ctx.state.account!);
    await next();
  };
}
