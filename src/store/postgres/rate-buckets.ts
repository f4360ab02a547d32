// Intake rate limits shared by every instance: one token bucket per account in
// rate_buckets, refilled and taken in a single atomic upsert, so the limit holds exactly
// across instances (each request costs one round trip). Same semantics as the in-memory
// buckets: a burst of two seconds of rate; a take larger than the burst passes on a full
// bucket and leaves it in debt.
import type pg from 'pg';
import type { TokenBucketLimiter } from '../../http/rate-limit.ts';

const BURST_SECONDS = 2;

export function pgTokenBuckets(pool: pg.Pool, opts: { now?: () => number } = {}): TokenBucketLimiter {
  const now = opts.now ?? Date.now;
  return {
    async take(key, perSecond, count = 1) {
      const capacity = perSecond * BURST_SECONDS;
      const needed = Math.min(count, capacity);
      const t = now();
      const { rows: [b] } = await pool.query<{ allowed: boolean; tokens: number }>(
        `INSERT INTO rate_buckets AS b (key, tokens, at, allowed) VALUES ($1, $2::float8 - $4, $3, true)
         ON CONFLICT (key) DO UPDATE SET
           allowed = LEAST($2, b.tokens + GREATEST(0, $3 - b.at) / 1000.0 * $5) >= $6,
           tokens = LEAST($2, b.tokens + GREATEST(0, $3 - b.at) / 1000.0 * $5)
             - CASE WHEN LEAST($2, b.tokens + GREATEST(0, $3 - b.at) / 1000.0 * $5) >= $6 THEN $4 ELSE 0 END,
           at = GREATEST(b.at, $3)
         RETURNING allowed, tokens`,
        [key, capacity, t, count, perSecond, needed]);
      return b.allowed ? 0 : Math.max(1, Math.ceil((needed - b.tokens) / perSecond));
    },
  };
}
