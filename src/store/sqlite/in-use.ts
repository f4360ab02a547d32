// Whether another process has the SQLite store open: a running server, or a CLI command.
// The write gate (write-gate.ts) orders one process's own threads and is invisible from
// outside, and delivery leases exist only while work is pending (an idle server holds
// none), so neither tells a command that a server is running. SQLite's own locks do: in
// WAL mode every open connection keeps a shared lock on the database file for as long as
// it is open, so a connection in exclusive locking mode that cannot take its exclusive
// lock at once knows someone else has the store open. A process that died holds no lock.
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';

/**
 * Runs `fn` while holding the store at `file` exclusively (no other connection can read or
 * write it meanwhile), after folding its WAL into the database file; returns undefined
 * without running it when another process has the store open. `fn` must not touch the
 * store's files through SQLite.
 */
export function whileStoreUnused<T>(file: string, fn: () => T): { result: T } | undefined {
  const db = new Database(file, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 0');
    db.pragma('locking_mode = EXCLUSIVE');
    try {
      db.exec('BEGIN EXCLUSIVE; COMMIT');
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_BUSY') return undefined;
      throw err;
    }
    // Everything committed is in the database file now, so the file alone is the store.
    if (db.pragma('journal_mode', { simple: true }) === 'wal') db.pragma('wal_checkpoint(TRUNCATE)');
    return { result: fn() };
  } finally {
    db.close();
  }
}

/** Whether another process has the store at `file` open (false when there is no store). */
export function storeInUse(file: string): boolean {
  return existsSync(file) && whileStoreUnused(file, () => true) === undefined;
}
