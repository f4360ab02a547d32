// One SQLite connection with tracklane's pragmas. The store's main connection and the
// writer thread's connection (writer-thread.ts) both open through here, so an event is
// committed under the same durability settings whichever thread commits it.
// Loaded in the writer thread through tsx's require hook: no top-level await.
import Database from 'better-sqlite3';
import { WAL_LIMIT_BYTES } from './wal-checkpoints.ts';
import { makeStorePrivate } from './private-files.ts';

export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/**
 * The server's waits for a write lock held by someone else (another process, a backup):
 * the writer thread, which commits intake, gives up after a second, so intake answers 503
 * with Retry-After instead of hanging; the main thread's connection (delivery bookkeeping,
 * custom records) waits at most 200 ms per attempt, so the event loop — and /healthz —
 * never stalls, and the lanes back off. The CLI keeps DEFAULT_BUSY_TIMEOUT_MS.
 */
export const SERVER_BUSY_TIMEOUTS = { writerMs: 1_000, mainMs: 200 } as const;

/**
 * WAL (trimmed to `walLimitBytes` whenever it restarts), synchronous=FULL (an acknowledged
 * event survives power loss), a busy timeout and foreign keys. Throws when a file database
 * does not enter WAL mode. A file database's folder and files are made private first
 * (private-files.ts; openSqliteStore reports what that tightened).
 */
export function openConnection(file: string, busyTimeoutMs = DEFAULT_BUSY_TIMEOUT_MS, walLimitBytes = WAL_LIMIT_BYTES): Database.Database {
  if (file !== ':memory:') makeStorePrivate(file);
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma(`journal_size_limit = ${Math.max(0, Math.floor(walLimitBytes))}`);
    db.pragma('synchronous = FULL');
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    db.pragma('foreign_keys = ON');
    if (file !== ':memory:' && db.pragma('journal_mode', { simple: true }) !== 'wal') {
      throw new Error(`SQLite at ${file} did not enter WAL mode`);
    }
  } catch (e) {
    db.close();
    throw e;
  }
  return db;
}
