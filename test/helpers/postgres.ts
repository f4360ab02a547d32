// PostgreSQL for tests: each suite gets a database of its own, created here and dropped
// after, by the suite or else at the end of the run (run-end.ts), so a suite that fails half
// way leaves none behind. On a machine without PostgreSQL the suites are skipped with a loud
// notice, unless TRACKLANE_REQUIRE_POSTGRES=1 (CI sets it), which turns a missing server into
// a failure.
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { atRunEnd } from './run-end.ts';

export const PG_ADMIN_URL = process.env.TRACKLANE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REQUIRED = process.env.TRACKLANE_REQUIRE_POSTGRES === '1';

let available: Promise<boolean> | undefined;
let warned = false;

/** Whether the test PostgreSQL answers (checked once per process). */
export function postgresAvailable(): Promise<boolean> {
  available ??= (async () => {
    const c = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 2_000 });
    try {
      await c.connect();
      await c.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await c.end().catch(() => undefined);
    }
  })();
  return available;
}

/** In a `before` hook: skips the suite (loudly) when PostgreSQL is missing, or fails when it is required. */
export async function requirePostgres(ctx: Mocha.Context): Promise<void> {
  if (await postgresAvailable()) return;
  if (REQUIRED) throw new Error(`TRACKLANE_REQUIRE_POSTGRES=1 but PostgreSQL does not answer at ${PG_ADMIN_URL}`);
  if (!warned) {
    warned = true;
    console.warn(`\n  !!! PostgreSQL does not answer at ${PG_ADMIN_URL}: the PostgreSQL suites are SKIPPED.\n  !!! Set TRACKLANE_REQUIRE_POSTGRES=1 to make that a failure.\n`);
  }
  ctx.skip();
}

export interface TestDatabase {
  url: string;
  name: string;
  /** Empties every table (keeps the schema). */
  reset(): Promise<void>;
  drop(): Promise<void>;
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 2_000 });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** Creates an empty database `tl_test_<random>`; its URL points the store at it. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `tl_test_${randomBytes(6).toString('hex')}`;
  const dropDatabase = () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined);
  const dropped = atRunEnd(dropDatabase);
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async reset() {
      const c = new pg.Client({ connectionString: url.toString() });
      await c.connect();
      try {
        const { rows } = await c.query<{ t: string }>(`SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations'`);
        if (rows.length > 0) await c.query(`TRUNCATE ${rows.map((r) => `"${r.t}"`).join(', ')} RESTART IDENTITY CASCADE`);
      } finally {
        await c.end().catch(() => undefined);
      }
    },
    async drop() {
      await dropDatabase();
      dropped();
    },
  };
}

/** Runs one statement on the test server's admin database, on a connection of its own. */
export function adminQuery(sql: string, args: unknown[] = []): Promise<pg.QueryResult> {
  return admin((c) => c.query(sql, args));
}

/** Whether a database of that name exists on the test server. */
export async function databaseExists(name: string): Promise<boolean> {
  const { rowCount } = await admin((c) => c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]));
  return rowCount === 1;
}
