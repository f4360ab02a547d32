// PostgreSQL's fan-out side of delivery: accepted events read from the event log after each
// partition's cursor (fan-out-cursor.ts, docs/fan-out-cursor-postgres.md), and the exceptions
// dispatch_queue still holds (held, replayed, left unsettled by a stopped holder) claimed with
// FOR UPDATE SKIP LOCKED, each with the rows an earlier, unfinished fan-out stored for it; a
// fan-out's rows committed with its events settling (the cursor moving past them) or leaving
// the queue, or staying open for their handoffs until those are recorded (finishEvents).
// The lanes' side: delivery-store.ts. Commits are relaxed like the rest of the bookkeeping.
//
// This module is the store object: the partitions it holds (fan-out-held.ts), its writes run
// one at a time, and the backlog and lease holders. The transactions: the claim
// (fan-out-claim.ts), the completion and finishEvents (fan-out-complete.ts), take-over and
// hand-back (fan-out-takeover.ts); their SQL text is in fan-out-sql.ts.
import type pg from 'pg';
import type { DeliveryStore } from '../delivery-contract.ts';
import type { Held } from './fan-out-held.ts';
import { claimEvents } from './fan-out-claim.ts';
import { completeFanOut, finishEvents } from './fan-out-complete.ts';
import { recoverCursors, releaseCursors } from './fan-out-takeover.ts';
import { BACKLOG, CURSOR_HOLDERS } from './fan-out-sql.ts';

/** The fan-out's store side, with the cursor leases releaseOwner and recoverExpiredLeases hand back in their transaction. */
export interface PgFanOut extends Pick<DeliveryStore, 'claimEvents' | 'completeFanOut' | 'finishEvents'> {
  /** Hands back the partitions `owner` holds (its in-memory state here is forgotten); returns how many. */
  releaseCursors(c: pg.ClientBase, owner: string): Promise<number>;
  /** Hands back the partitions whose lease has expired; returns how many. */
  recoverCursors(c: pg.ClientBase, now: number): Promise<number>;
  /** Owners holding a partition's lease. */
  cursorHolders(): Promise<string[]>;
  /**
   * dispatch_queue's rows and the accepted events not fanned out yet or open: in the partitions
   * this store object holds, those it holds open and those after its claims; in the others, those
   * after the cursor (an event settled behind one still open counts there too).
   */
  backlog(): Promise<number>;
}

export function pgDispatchQueue(pool: pg.Pool): PgFanOut {
  /** The partitions this store object holds, by part. */
  const held: Held = new Map();
  /** Cursor writes of this store object, one at a time: each computes from `held` and applies after its commit. */
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = chain.then(fn, fn);
    chain = run.catch(() => undefined);
    return run;
  };

  return {
    claimEvents: (claimId, now, leaseMs, limit) => serial(() => claimEvents(pool, held, claimId, now, leaseMs, limit)),
    completeFanOut: (claimId, now, results) => serial(() => completeFanOut(pool, held, claimId, now, results)),
    finishEvents: (claimId, seqs) => serial(() => finishEvents(pool, held, claimId, seqs)),
    releaseCursors: (c, owner) => releaseCursors(c, held, owner),
    recoverCursors: (c, now) => recoverCursors(c, now),

    async backlog() {
      const own = [...held].map(([p, h]) => ({ p, from: h.pos.claimed }));
      const open = [...held.values()].reduce((n, h) => n + h.open.filter((e) => !e.settled).length, 0);
      const { rows } = await pool.query<{ n: number }>(BACKLOG, [own.map((o) => o.p), own.map((o) => o.from.x.toString()), own.map((o) => o.from.s)]);
      return rows[0].n + open;
    },

    async cursorHolders() {
      const { rows } = await pool.query<{ owner: string }>(CURSOR_HOLDERS);
      return rows.map((r) => r.owner);
    },
  };
}
