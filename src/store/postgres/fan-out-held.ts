// The partitions a PostgreSQL fan-out store object holds (dispatch-queue.ts), kept in memory
// with their open events, and settling some of those events: the cursor rows are written in
// the caller's transaction, fenced on the partition's lease (settleOn), and the memory moves
// on once it has committed (applySettled). Used by the completion and finishEvents
// (fan-out-complete.ts); a claim replaces what it touched (fan-out-claim.ts).
import type pg from 'pg';
import { partOf, settle, writeCursors, type HeldPart, type Key, type OpenEvent, type Settled } from './fan-out-cursor.ts';

/** The partitions a store object holds, by part. */
export type Held = Map<number, HeldPart>;

/** Events to settle, by partition: their seqs, and the highest key a completion mapped (null: none). */
export type SettleGroups = Map<number, { seqs: Set<number>; mapped: Key | null }>;

/** The open event `seq` of a partition held for `owner`, with its partition. */
export function openOf(held: Held, seq: number, owner: string): { part: HeldPart; e: OpenEvent } | undefined {
  const p = held.get(partOf(seq));
  if (p === undefined || p.owner !== owner) return undefined;
  const e = p.open.find((o) => o.key.s === seq && !o.settled);
  return e === undefined ? undefined : { part: p, e };
}

/** A held partition's lease after a write at `now` (null: no clock, as finishEvents has none: kept). */
const renewed = (h: HeldPart, now: number | null): number => (now === null ? h.leaseUntil : Math.max(h.leaseUntil, now + h.leaseMs));

/** Settles events of partitions held for `owner`, fenced on its lease: the settle plans, and the partitions still ours. */
export async function settleOn(c: pg.ClientBase, held: Held, owner: string, byPart: SettleGroups, now: number | null) {
  const plans: Settled[] = [];
  for (const [part, { seqs, mapped }] of byPart) plans.push(settle(part, held.get(part)!, seqs, mapped));
  const ours = await writeCursors(c, plans.map((p) => (p.released ? { part: p.part, pos: p.pos, owner: null, leaseUntil: null }
    : { part: p.part, pos: p.pos, owner, leaseUntil: renewed(held.get(p.part)!, now) })), owner);
  return { plans, ours };
}

/** After a settle committed: the partitions written move on, the others (their lease was lost) are forgotten. */
export function applySettled(held: Held, plans: readonly Settled[], ours: ReadonlySet<number>, now: number | null): void {
  for (const p of plans) {
    const h = held.get(p.part);
    if (h === undefined) continue;
    if (!ours.has(p.part) || p.released) held.delete(p.part);
    else held.set(p.part, { ...h, pos: p.pos, open: p.open, leaseUntil: renewed(h, now) });
  }
}
