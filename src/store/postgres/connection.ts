// The PostgreSQL pool (node-postgres) with tracklane's settings: BIGINT columns (epoch
// milliseconds, sequence numbers) come back as numbers, an idle client that the server
// drops (restart, pg_terminate_backend) is logged and replaced instead of crashing the
// process, and `tx` runs a function in one transaction on one client.
import pg from 'pg';

/** int8 → number: every BIGINT here is a millisecond time or a row number, far below 2^53. */
const INT8_OID = 20;
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

export interface PgOptions {
  url: string;
  /** Pool size (PG_POOL_SIZE); default 10. */
  max?: number;
  /** Called when an idle client fails (the pool drops it and opens another when needed). */
  onError?: (err: Error) => void;
}

/**
 * An idle client is closed after this long: longer than the reads of an idle instance come
 * (every 30 s on each thread, src/announced-poll.ts HEARD_POLL_MS), which then find the client
 * they used last open. At 30 s each such read found it closed a moment before and opened
 * another: a TCP connect, authentication and a new backend process every 30 s per thread.
 */
export const IDLE_CLIENT_MS = 65_000;

export function createPool(opts: PgOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    types,
    connectionTimeoutMillis: 2_000,
    idleTimeoutMillis: IDLE_CLIENT_MS,
    // A statement stuck behind a lock or a dead server fails instead of hanging intake.
    query_timeout: 15_000,
  });
  pool.on('error', (err) => opts.onError?.(err));
  return pool;
}

/**
 * The intake commit's limits, as SQLite mode's writer gives up after its 1 s busy timeout:
 * a lock held by another session (LOCK TABLE, a long ALTER) fails the commit after a second
 * (lock_timeout, SQLSTATE 55P03) and any statement after five (statement_timeout, 57014),
 * so intake answers 503 + Retry-After instead of waiting as long as the lock lasts.
 */
export const PG_INTAKE_LIMITS = { lockMs: 1_000, statementMs: 5_000 } as const;

/** Limits of one transaction's waits (SET LOCAL: they end with it). */
export interface TxLimits {
  lockMs: number;
  statementMs: number;
}

/** lock_timeout (55P03) or statement_timeout (57014): the transaction gave up waiting. */
export const isTimeoutError = (err: unknown): boolean => {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '55P03' || code === '57014';
};

/**
 * Runs `fn` inside BEGIN … COMMIT on one client; ROLLBACK when it throws. A COMMIT that
 * fails (the connection dropped) throws too and is never retried here: whether it took
 * effect is unknown, so the caller answers 503 and the client's retry meets dedup.
 * `relaxed`: synchronous_commit off, for delivery bookkeeping whose loss only repeats work.
 * `limits`: lock and statement timeouts for this transaction only.
 * `generic`: its named statements run their generic plan from the first execution on (a
 * statement whose plan does not depend on its values, costly to plan).
 * `first`: a statement sent with BEGIN, in its round trip (say, taking locks: the transaction's
 * next statements see what the holders committed).
 */
export async function tx<T>(
  pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>, opts: { relaxed?: boolean; limits?: TxLimits; generic?: boolean; first?: string } = {},
): Promise<T> {
  const begin = ['BEGIN'];
  if (opts.relaxed) begin.push('SET LOCAL synchronous_commit = off');
  if (opts.generic) begin.push('SET LOCAL plan_cache_mode = force_generic_plan');
  if (opts.limits) begin.push(`SET LOCAL lock_timeout = ${Math.round(opts.limits.lockMs)}`, `SET LOCAL statement_timeout = ${Math.round(opts.limits.statementMs)}`);
  if (opts.first !== undefined) begin.push(opts.first);
  const client = await pool.connect();
  let broken = false;
  // A checked-out client whose connection the server ends between two queries emits
  // 'error'; without a listener that would be an uncaught exception. The next query fails anyway.
  const onError = () => {
    broken = true;
  };
  client.on('error', onError);
  try {
    await client.query(begin.join('; '));
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    try {
      await client.query('ROLLBACK');
    } catch {
      broken = true; // the connection is gone: do not hand it back to the pool
    }
    throw err;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}
