// Chooses the store implementation from the config.
import { join } from 'node:path';
import type { Config } from '../config.ts';
import type { Store } from './types.ts';
import { openSqliteStore } from './sqlite/sqlite-store.ts';

export const sqliteFile = (cfg: Pick<Config, 'dataDir'>): string => join(cfg.dataDir, 'tracklane.db');

export async function openStore(cfg: Config): Promise<Store> {
  if (cfg.databaseUrl) {
    throw new Error('DATABASE_URL is set, but this build has only the SQLite store; unset DATABASE_URL to use SQLite');
  }
  return openSqliteStore({ file: sqliteFile(cfg), dedupWindowMs: cfg.dedupWindowDays * 86_400_000 });
}
