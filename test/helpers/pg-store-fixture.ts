// A PostgreSQL store on a database of its own for a describe block, and a raw client on the
// same database: opened before its tests (skipped without PostgreSQL), closed and dropped after.
import pg from 'pg';
import { openPostgresStore, type PgStore } from '../../src/store/postgres/pg-store.ts';
import { createTestDatabase, requirePostgres, type TestDatabase } from './postgres.ts';

export interface PgStoreFixture { db: TestDatabase; store: PgStore; raw: pg.Client }

/** Call inside a describe: the returned object is filled in by its `before`. */
export function usePgStore(): PgStoreFixture {
  const f = {} as PgStoreFixture;
  before(async function () {
    await requirePostgres(this);
    f.db = await createTestDatabase();
    f.store = await openPostgresStore({ url: f.db.url });
    f.raw = new pg.Client({ connectionString: f.db.url });
    await f.raw.connect();
  });
  after(async () => {
    await f.raw?.end();
    await f.store?.close();
    await f.db?.drop();
  });
  return f;
}
