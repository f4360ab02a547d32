// Intake rate limits shared by every instance: one token bucket per account in the
// rate_buckets table (unlogged), refilled and taken in one atomic upsert. So that a request
// does not cost a round trip, an instance reserves tokens in small chunks (50 ms of the
// account's rate, at least the request's own count) and spends them locally; a reservation
// unused after a second is dropped. Precision: the cluster never admits more than the
// limit; it may admit up to one chunk per instance less than the limit in a second (tokens
// reserved but not spent), and for small limits (under 20/s) every request takes its token
// from the database, exactly. Same bucket semantics as the in-memory one: a burst of two
// seconds of rate; a take larger than the burst passes on a full bucket (or one token short
// of full) and leaves it in debt.
import type pg from 'pg';
import { neededFor, type RateLimiter, type TokenBucketLimiter } from '../rate-limit-contract.ts';

const BURST_SECONDS = 2;
/** A chunk is this much of a second's rate. */
const CHUNK_SECONDS = 0.05;
/** Reserved tokens are spent within this long or dropped. */
const RESERVATION_MS = 1_000;

const AVAILABLE = 'LEAST($2, b.tokens + GREATEST(0, $3 - b.at) / 1000.0 * $5)';

/** Shared bucket core: `take(key, perSecond, count, capacity)` → 0 when allowed, else seconds to wait. */
interface SharedBuckets {
  take(key: string, perSecond: number, count: number, capacity: number): Promise<number>;
}

/** Endpoints 1–3 and batch intake: a burst of two seconds of the account's rate. */
export function pgTokenBuckets(pool: pg.Pool, opts: { now?: () => number } = {}): TokenBucketLimiter {
  const shared = sharedBuckets(pool, opts.now ?? Date.now);
  return { take: (key, perSecond, count = 1) => shared.take(`intake:${key}`, perSecond, count, perSecond * BURST_SECONDS) };
}

/** Custom endpoints: `burst` tokens refilled at `perMinute`, per (account, endpoint, env), shared by every instance (PostgreSQL text holds no NUL: the key's separators become spaces). */
export function pgCustomRateLimiter(pool: pg.Pool, opts: { now?: () => number } = {}): RateLimiter {
  const shared = sharedBuckets(pool, opts.now ?? Date.now);
  return {
    async take(key, limit) {
      const wait = await shared.take(`custom:${key.replaceAll('\u0000', ' ')}`, limit.perMinute / 60, 1, limit.burst);
      return wait === 0 ? { ok: true } : { ok: false, retryAfterSeconds: wait };
    },
  };
}

function sharedBuckets(pool: pg.Pool, now: () => number): SharedBuckets {
  const reserved = new Map<string, { tokens: number; until: number }>();
  /** One reservation per key at a time: concurrent requests wait for it instead of each reserving a chunk. */
  const reserving = new Map<string, Promise<number>>();

  async function reserve(key: string, perSecond: number, count: number, capacity: number): Promise<number> {
    const t = now();
    const needed = neededFor(count, capacity);
    const want = Math.max(count, Math.min(Math.floor(perSecond * CHUNK_SECONDS), Math.floor(capacity / 10)));
    const { rows: [b] } = await pool.query<{ granted: number; tokens: number }>({
      name: 'tl_rate_reserve',
      text: `INSERT INTO rate_buckets AS b (key, tokens, at, granted) VALUES ($1, $2::float8 - $7, $3, $7)
       ON CONFLICT (key) DO UPDATE SET
         granted = CASE WHEN ${AVAILABLE} >= $6 THEN GREATEST($4, LEAST(${AVAILABLE}, $7)) ELSE 0 END,
         tokens = ${AVAILABLE} - CASE WHEN ${AVAILABLE} >= $6 THEN GREATEST($4, LEAST(${AVAILABLE}, $7)) ELSE 0 END,
         at = GREATEST(b.at, $3)
       RETURNING granted, tokens`,
      values: [key, capacity, t, count, perSecond, needed, want],
    });
    if (b.granted <= 0) return Math.max(1, Math.ceil((needed - b.tokens) / perSecond));
    if (reserved.size > 100_000) reserved.clear();
    const local = reserved.get(key);
    const keep = local && local.until > t ? local.tokens : 0;
    reserved.set(key, { tokens: keep + b.granted, until: t + RESERVATION_MS });
    return 0;
  }

  return {
    async take(key, perSecond, count, capacity) {
      for (;;) {
        const local = reserved.get(key);
        if (local && local.until > now() && local.tokens >= count) {
          local.tokens -= count;
          return 0;
        }
        const pending = reserving.get(key);
        if (pending) {
          await pending; // then look again: spend from it, or reserve for this request
          continue;
        }
        const p = reserve(key, perSecond, count, capacity).finally(() => reserving.delete(key));
        reserving.set(key, p);
        const wait = await p;
        if (wait > 0) return wait;
      }
    },
  };
}
