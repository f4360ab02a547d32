// Delivery bookkeeping commits with synchronous=NORMAL (the connection stays FULL for
// everything else, acknowledged events above all). In WAL mode such a commit survives a
// process crash (kill -9); only a power loss or OS crash can undo the latest ones, and
// undoing bookkeeping only repeats work: a fan-out is redone identically, a claim lapses, a
// recorded attempt is sent again (at-least-once). It cuts an fsync from every claim and record.
import type Database from 'better-sqlite3';
import { processWriteGate } from './write-gate.ts';

/**
 * A runner for bookkeeping transactions on `db`: each without the per-commit fsync, through
 * the process's write gate (not urgent: intake's commits go first).
 *
 * @example const relaxed = relaxedCommit(db); relaxed(db.transaction(() => ...));
 */
export function relaxedCommit(db: Database.Database) {
  const level = db.pragma('synchronous', { simple: true }) as number;
  // Prepared once: db.pragma() would compile the statement on every transaction.
  const syncNormal = db.prepare('PRAGMA synchronous = NORMAL');
  const syncBack = db.prepare(`PRAGMA synchronous = ${Number(level)}`);
  const gate = processWriteGate();
  const gated = { urgent: false, waitMs: Number(db.pragma('busy_timeout', { simple: true })) };
  function relaxed<A extends unknown[], R>(tx: Database.Transaction<(...args: A) => R>, ...args: A): R {
    const commit = () => gate.run(() => tx.immediate(...args), gated);
    if (level <= 1) return commit(); // already NORMAL (or OFF)
    syncNormal.run();
    try {
      return commit();
    } finally {
      syncBack.run();
    }
  }
  return relaxed;
}
