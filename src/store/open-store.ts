// Chooses the store implementation from the config.
import { join } from 'node:path';
import type { Config } from '../config.ts';
import type { Store } from './types.ts';
import { openSqliteStore } from './sqlite/sqlite-store.ts';
import { SERVER_BUSY_TIMEOUTS } from './sqlite/connection.ts';

export const sqliteFile = (cfg: Pick<Config, 'dataDir'>): string => join(cfg.dataDir, 'tracklane.db');

/** `server`: short lock waits (see SERVER_BUSY_TIMEOUTS); the CLI waits longer. */
export async function openStore(cfg: Config, role: 'server' | 'cli' = 'cli'): Promise<Store> {
  if (cfg.databaseUrl) {
    throw new Error('DATABASE_URL is set, but this build has only the SQLite store; unset DATABASE_URL to use SQLite');
  }
  const waits = role === 'server' ? { busyTimeoutMs: SERVER_BUSY_TIMEOUTS.writerMs, mainBusyTimeoutMs: SERVER_BUSY_TIMEOUTS.mainMs } : {};
  return openSqliteStore({ file: sqliteFile(cfg), dedupWindowMs: cfg.dedupWindowDays * 86_400_000, ...waits });
}
