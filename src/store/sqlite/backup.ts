// `tracklane backup`: a consistent copy of the SQLite store, taken while the server runs.
// VACUUM INTO, not better-sqlite3's db.backup(): see the comment on backupSqlite.
import Database from 'better-sqlite3';
import { closeSync, existsSync, fsyncSync, linkSync, openSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';
import { DEFAULT_BUSY_TIMEOUT_MS } from './connection.ts';
import { createPrivateFile } from './private-files.ts';

/** A refusal or failure worded for the operator. */
export class BackupError extends Error {
  override name = 'BackupError';
}

export interface BackupResult {
  /** The backup, an absolute path. */
  file: string;
  bytes: number;
  /** The store that was copied. */
  source: string;
  /** PRAGMA user_version of the copy: the SQLite schema version it is at. */
  schema_version: number;
  /** PRAGMA quick_check of the copy. */
  integrity: 'ok';
  /** The copy holds every transaction committed before this moment (ISO 8601). */
  snapshot_at: string;
  finished_at: string;
}

/**
 * Copies the store at `source` to `target` and checks the copy. VACUUM INTO reads the
 * database in one read transaction, a snapshot that in WAL mode neither blocks the server's
 * commits nor is disturbed by them, so it always finishes in one pass; the online backup API
 * (db.backup) copies page ranges in steps and starts over whenever another process commits
 * between two steps, which under steady intake may never end. The copy is compact (no free
 * pages) and a single file in rollback-journal mode: nothing beside it is needed to restore.
 * It is written under a temporary name and renamed into place, so `target` is never a
 * half-written file; without `force` an existing `target` is refused. The copy holds what the
 * store holds (destinations' secrets among it), so it is 0600 from its first byte: VACUUM INTO
 * writes into an empty file created with that mode, never a file the umask left readable.
 */
export function backupSqlite(source: string, target: string, opts: { force?: boolean; busyTimeoutMs?: number } = {}): BackupResult {
  const file = resolve(target);
  const from = resolve(source);
  if (!existsSync(from)) throw new BackupError(`no SQLite store at ${from}`);
  if ([from, `${from}-wal`, `${from}-shm`].includes(file)) throw new BackupError(`${file} is the store itself; name another file`);
  if (existsSync(file) && !opts.force) throw new BackupError(`${file} exists; pass --force to replace it`);
  if (!existsSync(dirname(file))) throw new BackupError(`the folder ${dirname(file)} does not exist`);

  const tmp = join(dirname(file), `.${basename(file)}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const db = new Database(from, { fileMustExist: true });
    let snapshotAt: number;
    try {
      db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS}`);
      createPrivateFile(tmp);
      snapshotAt = Date.now();
      db.prepare('VACUUM INTO ?').run(tmp);
    } finally {
      db.close();
    }
    const { schemaVersion } = checkCopy(tmp);
    syncFile(tmp);
    place(tmp, file, opts.force === true);
    syncFile(dirname(file));
    return {
      file, bytes: statSync(file).size, source: from, schema_version: schemaVersion, integrity: 'ok',
      snapshot_at: new Date(snapshotAt).toISOString(), finished_at: new Date().toISOString(),
    };
  } finally {
    if (existsSync(tmp)) unlinkSync(tmp);
  }
}

/** Opens the copy read-only and runs quick_check on it: a backup that does not open is no backup. */
function checkCopy(file: string): { schemaVersion: number } {
  const copy = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const check = copy.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new BackupError(`the copy failed its integrity check (${String(check)}); the store may be damaged`);
    return { schemaVersion: copy.pragma('user_version', { simple: true }) as number };
  } finally {
    copy.close();
  }
}

/** Moves the finished copy to `file`: over an existing one with `force`, else only if `file` is still absent. */
function place(tmp: string, file: string, force: boolean): void {
  if (force) return renameSync(tmp, file);
  try {
    linkSync(tmp, file); // fails with EEXIST, atomically, if `file` appeared meanwhile
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new BackupError(`${file} exists; pass --force to replace it`);
    // A file system without hard links: the check before the copy has to do.
    if (existsSync(file)) throw new BackupError(`${file} exists; pass --force to replace it`);
    renameSync(tmp, file);
  }
}

/** fsync of a file or folder: what was renamed into it stays after a power loss. */
export function syncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
