// Chooses the store implementation from the config.
import { join } from 'node:path';
import type { Config } from '../config.ts';
import type { Store } from './types.ts';
import { openSqliteStore } from './sqlite/sqlite-store.ts';
import { openPostgresStore } from './postgres/pg-store.ts';
import { SERVER_BUSY_TIMEOUTS } from './sqlite/connection.ts';
import type { ModeChange } from './sqlite/private-files.ts';

export const sqliteFile = (cfg: Pick<Config, 'dataDir'>): string => join(cfg.dataDir, 'tracklane.db');
/** Its write-ahead log: every commit of any process changes it (what a slowed poll tick watches). */
export const sqliteWalFile = (cfg: Pick<Config, 'dataDir'>): string => `${sqliteFile(cfg)}-wal`;

/**
 * SQLite under DATA_DIR, or PostgreSQL when DATABASE_URL is set (migrations applied on open
 * unless `migrate: false`; `'existing'`: not to a database without the schema, which is a
 * NoPgSchemaError). `server`: short lock waits (see SERVER_BUSY_TIMEOUTS); the CLI waits longer.
 * `onModesTightened`: SQLite's folder or files were readable by others and were made private.
 */
export async function openStore(cfg: Config, role: 'server' | 'cli' = 'cli', opts: {
  migrate?: boolean | 'existing'; onError?: (err: Error) => void; onModesTightened?: (changes: ModeChange[]) => void;
} = {}): Promise<Store> {
  if (cfg.databaseUrl) {
    return openPostgresStore({
      url: cfg.databaseUrl, poolSize: cfg.pgPoolSize, dedupWindowMs: cfg.dedupWindowDays * 86_400_000, migrate: opts.migrate, onError: opts.onError,
    });
  }
  const waits = role === 'server' ? { busyTimeoutMs: SERVER_BUSY_TIMEOUTS.writerMs, mainBusyTimeoutMs: SERVER_BUSY_TIMEOUTS.mainMs } : {};
  return openSqliteStore({ file: sqliteFile(cfg), dedupWindowMs: cfg.dedupWindowDays * 86_400_000, onModesTightened: opts.onModesTightened, ...waits });
}

/** What to tell a person about the database in use: the SQLite file, or the PostgreSQL URL without its password. */
export function describeDatabase(cfg: Pick<Config, 'dataDir' | 'databaseUrl'>): string {
  if (!cfg.databaseUrl) return sqliteFile(cfg);
  try {
    const u = new URL(cfg.databaseUrl);
    if (u.password) u.password = '****';
    return u.toString();
  } catch {
    return 'postgres://…';
  }
}
