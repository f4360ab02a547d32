// The store contract suites run once per store: SQLite in a temp file, PostgreSQL in a
// database of its own (created for the suite, emptied before each test, dropped after).
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { rmSync } from 'node:fs';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { openPostgresStore } from '../../src/store/postgres/pg-store.ts';
import type { Store } from '../../src/store/types.ts';
import { tempDir } from './test-server.ts';
import { createTestDatabase, requirePostgres, type TestDatabase } from './postgres.ts';

export const STORE_KINDS = ['sqlite', 'postgres'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];
export const STORE_LABEL: Record<StoreKind, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

export interface StoreHarness {
  /** A fresh, empty store (call in beforeEach or a test). */
  open(opts?: { dedupWindowMs?: number }): Promise<Store>;
  /** Closes what open() gave and removes its files. */
  close(): Promise<void>;
  /** The PostgreSQL database of the suite (postgres only). */
  readonly database: TestDatabase | undefined;
  /** The SQLite file of the store open() gave (sqlite only). */
  readonly file: string | undefined;
}

/** Call inside a describe: registers the suite's hooks for `kind` and returns how to open stores. */
export function storeHarness(kind: StoreKind): StoreHarness {
  let db: TestDatabase | undefined;
  let dir: string | undefined;
  let store: Store | undefined;
  if (kind === 'postgres') {
    before(async function () {
      this.timeout(20_000);
      await requirePostgres(this);
      db = await createTestDatabase();
    });
    after(async () => {
      await db?.drop();
    });
  }
  return {
    get database() {
      return db;
    },
    get file() {
      return dir === undefined ? undefined : join(dir, 'tracklane.db');
    },
    async open(opts = {}) {
      if (kind === 'postgres') {
        await db!.reset();
        store = await openPostgresStore({ url: db!.url, dedupWindowMs: opts.dedupWindowMs });
      } else {
        dir = tempDir('tl-store-');
        store = openSqliteStore({ file: join(dir, 'tracklane.db'), dedupWindowMs: opts.dedupWindowMs });
      }
      return store;
    },
    async close() {
      await store?.close();
      store = undefined;
      if (dir) rmSync(dir, { recursive: true, force: true });
      dir = undefined;
    },
  };
}

/** A second connection to the store `harness` opened, for a test's own counts (`SELECT count(*) AS n …`). */
export async function rawCounter(harness: StoreHarness): Promise<{ count(sql: string): Promise<number>; close(): Promise<void> }> {
  if (harness.database !== undefined) {
    const raw = new pg.Client({ connectionString: harness.database.url });
    await raw.connect();
    return { count: async (sql) => Number((await raw.query<{ n: string }>(sql)).rows[0].n), close: () => raw.end() };
  }
  const raw = new Database(harness.file!);
  return { count: async (sql) => (raw.prepare(sql).get() as { n: number }).n, close: async () => void raw.close() };
}
