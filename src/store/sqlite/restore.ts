// `tracklane restore`: puts a backup in place of the SQLite store, replacing the shell
// recipe it supersedes (whose `cd "$DATA_DIR"` with DATA_DIR unset stayed in the project
// folder and, its failures hidden, restored nothing). The backup is checked before anything
// is touched, the store is swapped only while no other process has it open, the store it
// replaces is kept beside it, and every file written is the service user's alone.
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, renameSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { MIGRATIONS } from './migrations.ts';
import { createPrivateFile, PRIVATE_DIR_MODE } from './private-files.ts';
import { storeInUse, whileStoreUnused } from './in-use.ts';
import { syncFile } from './backup.ts';

/** A refusal or failure worded for the operator. */
export class RestoreError extends Error {
  override name = 'RestoreError';
}

export interface RestoreResult {
  /** The backup restored, an absolute path. */
  file: string;
  /** The store it now is. */
  store: string;
  bytes: number;
  /** PRAGMA user_version of the backup; an older one is migrated when the store is next opened. */
  schema_version: number;
  integrity: 'ok';
  /** Where the store it replaced was kept, or null when there was none. */
  replaced: string | null;
  restored_at: string;
}

/** Tables every tracklane store has had since its first schema version. */
const CORE_TABLES = ['accounts', 'events'];

const IN_USE = 'a server (or another tracklane command) has the store open: stop it first, then restore';

/**
 * Restores the backup `backup` as the store `store` (tracklane.db). The backup must be a
 * sound tracklane store (integrity_check passes) at a schema version this build knows. It is
 * copied (VACUUM INTO: one compact file, whatever journal mode it was in) into the store's
 * folder under a temporary name, created 0600 before the first byte; then, holding the store
 * exclusively (in-use.ts), the current store is renamed `tracklane-replaced-<UTC time>.db`
 * (its WAL folded into it first) and the copy renamed into place. Refused while another
 * process has the store open. A missing store (a new machine) is simply created.
 */
export function restoreSqlite(backup: string, store: string, now = new Date()): RestoreResult {
  const file = resolve(backup);
  const target = resolve(store);
  if (!existsSync(file)) throw new RestoreError(`${file} does not exist`);
  if ([target, `${target}-wal`, `${target}-shm`].includes(file)) throw new RestoreError(`${file} is the store itself; name a backup`);
  const schemaVersion = checkBackup(file);
  if (storeInUse(target)) throw new RestoreError(IN_USE); // before the copy, which may take a while

  const dir = dirname(target);
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const tmp = join(dir, `.restore-${randomBytes(4).toString('hex')}.tmp`);
  try {
    createPrivateFile(tmp);
    const source = new Database(file, { readonly: true, fileMustExist: true });
    try {
      source.prepare('VACUUM INTO ?').run(tmp);
    } finally {
      source.close();
    }
    syncFile(tmp);
    let replaced: string | null = null;
    const swap = () => {
      if (existsSync(target)) {
        replaced = replacedName(target, now);
        renameSync(target, replaced);
      }
      // The WAL was folded into the replaced file; these belong to it and must not meet the copy.
      for (const side of ['-wal', '-shm']) rmSync(`${target}${side}`, { force: true });
      renameSync(tmp, target);
    };
    if (!existsSync(target)) swap();
    else if (whileStoreUnused(target, swap) === undefined) throw new RestoreError(IN_USE);
    syncFile(dir);
    return {
      file, store: target, bytes: statSync(target).size, schema_version: schemaVersion, integrity: 'ok',
      replaced, restored_at: new Date().toISOString(),
    };
  } finally {
    if (existsSync(tmp)) unlinkSync(tmp);
  }
}

/** The backup's schema version, once it is known to be a sound tracklane store this build can open. */
function checkBackup(file: string): number {
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new RestoreError(`${file} cannot be opened as a SQLite database: ${(err as Error).message}`);
  }
  try {
    let check: unknown;
    try {
      check = db.pragma('integrity_check', { simple: true });
    } catch (err) {
      throw new RestoreError(`${file} is not a tracklane backup: ${(err as Error).message}`);
    }
    if (check !== 'ok') throw new RestoreError(`${file} failed its integrity check (${String(check)}): it is damaged`);
    const version = db.pragma('user_version', { simple: true }) as number;
    const tables = new Set(db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table'`).pluck().all() as string[]);
    if (version < 1 || !CORE_TABLES.every((t) => tables.has(t))) throw new RestoreError(`${file} is a SQLite database but not a tracklane store`);
    if (version > MIGRATIONS.length) {
      throw new RestoreError(`${file} is at schema version ${version}, newer than this build's ${MIGRATIONS.length}: restore it with the tracklane version that made it, or a newer one`);
    }
    return version;
  } finally {
    db.close();
  }
}

/** `tracklane-replaced-20261126T031500Z.db` beside the store, numbered if that name is taken. */
function replacedName(store: string, now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  for (let n = 1; ; n++) {
    const name = join(dirname(store), `tracklane-replaced-${stamp}${n === 1 ? '' : `-${n}`}.db`);
    if (![name, `${name}-wal`].some(existsSync)) return name;
  }
}
