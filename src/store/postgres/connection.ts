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

export function createPool(opts: PgOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    types,
    connectionTimeoutMillis: 2_000,
    idleTimeoutMillis: 30_000,
    // A statement stuck behind a lock or a dead server fails instead of hanging intake.
    query_timeout: 15_000,
  });
  pool.on('error', (err) => opts.onError?.(err));
  return pool;
}

/**
 * Runs `fn` inside BEGIN … COMMIT on one client; ROLLBACK when it throws. A COMMIT that
 * fails (the connection dropped) throws too and is never retried here: whether it took
 * effect is unknown, so the caller answers 503 and the client's retry meets dedup.
 * `relaxed`: synchronous_commit off, for delivery bookkeeping whose loss only repeats work.
 */
export async function tx<T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>, opts: { relaxed?: boolean } = {}): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  // A checked-out client whose connection the server ends between two queries emits
  // 'error'; without a listener that would be an uncaught exception. The next query fails anyway.
  const onError = () => {
    broken = true;
  };
  client.on('error', onError);
  try {
    await client.query(opts.relaxed ? 'BEGIN; SET LOCAL synchronous_commit = off' : 'BEGIN');
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
