// Taking over and handing back PostgreSQL fan-out partitions (docs/fan-out-cursor-postgres.md,
// "Take-over"): at a claim, what becomes of each partition it locked (takePartitions): one this
// store object holds goes on, its open events whose claim's lease lapsed moved to
// dispatch_queue; one free, expired or of a restarted process is handed back (what its holder
// left unsettled to dispatch_queue) and read on after it. releaseOwner and
// recoverExpiredLeases hand partitions back the same way (releaseCursors, recoverCursors).
import type pg from 'pg';
import { handBack, positionsOf, sameKey, settle, type CursorRow, type HeldPart, type OpenEvent, type Positions } from './fan-out-cursor.ts';
import type { Held } from './fan-out-held.ts';
import { QUEUE_LAPSED } from './fan-out-sql.ts';

/** A locked partition as a claim goes on from it: its positions, the events open in it, and whether its row must be written. */
export interface PartState {
  pos: Positions;
  open: OpenEvent[];
  changed: boolean;
}

/**
 * Events another claim of this store object left open past their lease (at `now`): they go to
 * dispatch_queue (as its rows would have lapsed): completed ones owe rows for handoffs, the
 * others were being mapped (interrupted once).
 */
export const lapsedOf = (h: HeldPart, claimId: string, now: number): OpenEvent[] =>
  h.open.filter((e) => !e.settled && e.claimId !== claimId && e.leaseUntil <= now);

/**
 * Takes the partitions a claim of `claimId` (process owner `owner`) locked, in its transaction:
 * each one's state to read on from, and whether events went to dispatch_queue (handed back or lapsed).
 */
export async function takePartitions(c: pg.ClientBase, held: Held, locked: readonly CursorRow[], owner: string, claimId: string, now: number) {
  const state = new Map<number, PartState>();
  const takeOver: number[] = [];
  const moved: OpenEvent[] = [];
  for (const r of locked) {
    const pos = positionsOf(r);
    if (r.lease_owner === owner && held.get(r.part)?.owner === owner) {
      const h = held.get(r.part)!;
      const gone = lapsedOf(h, claimId, now);
      moved.push(...gone);
      const s = gone.length === 0 ? { pos: h.pos, open: h.open } : settle(r.part, h, new Set(gone.map((e) => e.key.s)), null);
      state.set(r.part, { pos: s.pos, open: s.open, changed: true });
      continue;
    }
    // Free, expired, or this owner's without memory here (a restarted process): what its holder left
    // unsettled goes to dispatch_queue (handBack), and the partition reads on after it.
    const clean = r.lease_owner === null && sameKey(pos.claimed, pos.cursor) && sameKey(pos.mapped, pos.cursor);
    if (!sameKey(pos.claimed, pos.cursor)) takeOver.push(r.part);
    state.set(r.part, { pos: { ...pos, cursor: pos.claimed, mapped: pos.claimed }, open: [], changed: !clean });
  }
  let queued = false;
  if (takeOver.length > 0) queued = (await handBack(c, 'c.part = ANY($1::int[])', [takeOver], false)) > 0;
  if (moved.length > 0) {
    await c.query(QUEUE_LAPSED,
      [moved.map((e) => e.key.s), moved.map((e) => e.claimId), moved.map((e) => e.leaseUntil), moved.map((e) => (e.completed ? 0 : 1))]);
    queued = true;
  }
  return { state, queued };
}

/** Hands back the partitions `owner` holds (its in-memory state here is forgotten); returns how many. */
export async function releaseCursors(c: pg.ClientBase, held: Held, owner: string): Promise<number> {
  const n = await handBack(c, 'c.lease_owner = $1', [owner], true);
  for (const [p, h] of held) if (h.owner === owner) held.delete(p);
  return n;
}

/** Hands back the partitions whose lease has expired at `now`; returns how many. */
export function recoverCursors(c: pg.ClientBase, now: number): Promise<number> {
  return handBack(c, 'c.lease_until <= $1', [now], true);
}
