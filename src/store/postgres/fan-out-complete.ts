// Completing and settling PostgreSQL fan-outs (docs/fan-out-cursor-postgres.md): completeFanOut
// commits a fan-out's rows with its events settling, in one transaction fenced on the leases:
// events from a partition settle there (the cursor moving past them) unless held or handing
// deliveries off; queued ones leave dispatch_queue, or stay in it for their holds or handoffs.
// finishEvents settles the events that handed deliveries off once those have their rows.
import type pg from 'pg';
import type { FanOutCommit, FanOutResult } from '../delivery-contract.ts';
import { ownerOf } from '../claim-owner.ts';
import { tx } from './connection.ts';
import { partOf, maxKey, type Settled } from './fan-out-cursor.ts';
import { applySettled, openOf, settleOn, type Held, type SettleGroups } from './fan-out-held.ts';
import { FINISH_QUEUED, HOLD, INSERT_DELIVERIES, NOTIFY_DELIVERIES, UNQUEUE } from './fan-out-sql.ts';

const relaxed = { relaxed: true };

/** A fan-out result with deliveries handed straight to a lane: its event stays open until they have rows. */
const handsOff = (r: FanOutResult): boolean => r.deliveries.some((d) => d.handoff === true);

/** DeliveryStore.completeFanOut for the partitions `held` of one store object (its caller runs one write at a time). */
export async function completeFanOut(pool: pg.Pool, held: Held, claimId: string, now: number, results: readonly FanOutResult[]): Promise<FanOutCommit> {
  const owner = ownerOf(claimId);
  // Events this store object took from a partition under this claim, and those it took from dispatch_queue.
  const fromCursor: SettleGroups = new Map();
  const cursorResults = new Map<number, FanOutResult>();
  const queueResults: FanOutResult[] = [];
  for (const r of results) {
    const o = openOf(held, r.seq, owner);
    if (o === undefined || o.e.claimId !== claimId || o.e.completed) {
      queueResults.push(r);
      continue;
    }
    cursorResults.set(r.seq, r);
    let g = fromCursor.get(o.e.part);
    if (g === undefined) fromCursor.set(o.e.part, (g = { seqs: new Set(), mapped: null }));
    g.mapped = g.mapped === null ? o.e.key : maxKey(g.mapped, o.e.key);
    // Settled now: neither held nor handing off (a held one moves to dispatch_queue below).
    if (r.held !== undefined || !handsOff(r)) g.seqs.add(r.seq);
  }
  const { commit, plans, ours: oursParts } = await tx(pool, async (c) => {
    const ours = new Set<number>(); // the others' lease was lost: the new holder fans them out
    // Partitions first: their lease fences the events taken from them (held until COMMIT).
    const { plans, ours: oursParts } = fromCursor.size === 0 ? { plans: [] as Settled[], ours: new Set<number>() }
      : await settleOn(c, held, owner, fromCursor, now);
    for (const r of cursorResults.values()) if (oursParts.has(partOf(r.seq))) ours.add(r.seq);
    // dispatch_queue events neither held nor handing off leave it (fenced on the lease); those that handed
    // deliveries off stay, leased to the claim, until those have rows (finishEvents): their mapping is counted finished.
    const unqueue: number[] = [];
    const keep: number[] = [];
    for (const r of queueResults) if (r.held === undefined) (handsOff(r) ? keep : unqueue).push(r.seq);
    if (unqueue.length > 0 || keep.length > 0) {
      const { rows: fenced } = await c.query<{ event_seq: number }>(UNQUEUE, [unqueue, keep, claimId]);
      for (const f of fenced) ours.add(Number(f.event_seq));
    }
    // Events held for some destinations stay queued for those, leased to the hold's claim (one from a partition is queued now).
    const holds = new Map<string, { claimId: string; leaseUntil: number; seqs: number[]; owed: string[]; cursor: boolean[] }>();
    for (const r of results) {
      if (r.held === undefined) continue;
      const cursor = cursorResults.has(r.seq);
      if (cursor && !ours.has(r.seq)) continue;
      const k = `${r.held.claimId}\0${r.held.leaseUntil}`;
      let g = holds.get(k);
      if (g === undefined) holds.set(k, (g = { claimId: r.held.claimId, leaseUntil: r.held.leaseUntil, seqs: [], owed: [], cursor: [] }));
      g.seqs.push(r.seq);
      g.owed.push(JSON.stringify(r.held.destinationIds));
      g.cursor.push(cursor);
    }
    for (const g of holds.values()) {
      const { rows: kept } = await c.query<{ event_seq: number }>(HOLD, [g.seqs, g.owed, g.claimId, g.leaseUntil, claimId, g.cursor]);
      for (const k of kept) ours.add(Number(k.event_seq));
    }
    const cols: unknown[][] = Array.from({ length: 12 }, () => []);
    const handedOff: number[] = [];
    for (const r of results) {
      if (!ours.has(r.seq)) continue;
      if (handsOff(r)) handedOff.push(r.seq);
      for (const d of r.deliveries) {
        if (d.handoff === true) continue; // its row is written when its attempt is recorded
        [r.seq, r.scriptId, d.destinationId, d.destinationType, r.eventId, d.part, d.item === null ? null : JSON.stringify(d.item),
          d.status, d.reason ?? null, d.status !== 'pending' ? null : now, d.message ?? null, r.receivedAt].forEach((v, k) => cols[k].push(v));
      }
    }
    const pendingByDestination = new Map<string, number>();
    if (cols[0].length > 0) {
      const { rows: pending } = await c.query<{ destination_id: string; n: number }>(INSERT_DELIVERIES, [...cols, now]);
      for (const p of pending) pendingByDestination.set(p.destination_id, p.n);
    }
    if (pendingByDestination.size > 0) await c.query(NOTIFY_DELIVERIES);
    return { commit: { events: ours.size, pendingByDestination, handedOff }, plans, ours: oursParts };
  }, relaxed);
  // Committed: the partitions move on (completed events wait for their handoffs' rows); a lost one is forgotten.
  applySettled(held, plans, oursParts, now);
  for (const [seq] of cursorResults) {
    const o = openOf(held, seq, owner);
    if (o !== undefined && o.e.claimId === claimId) o.e.completed = true;
  }
  return commit;
}

/** DeliveryStore.finishEvents for the partitions `held` of one store object (its caller runs one write at a time). */
export async function finishEvents(pool: pg.Pool, held: Held, claimId: string, seqs: readonly number[]): Promise<number> {
  if (seqs.length === 0) return 0;
  const owner = ownerOf(claimId);
  const fromCursor: SettleGroups = new Map();
  const queued: number[] = [];
  for (const seq of seqs) {
    const o = openOf(held, seq, owner);
    if (o === undefined || o.e.claimId !== claimId || !o.e.completed) {
      queued.push(seq);
      continue;
    }
    let g = fromCursor.get(o.e.part);
    if (g === undefined) fromCursor.set(o.e.part, (g = { seqs: new Set(), mapped: null }));
    g.seqs.add(seq);
  }
  if (fromCursor.size === 0) {
    const r = await tx(pool, (c) => c.query({ name: 'tl_finish_events', text: FINISH_QUEUED, values: [queued, claimId] }), relaxed);
    return r.rowCount ?? 0;
  }
  const { n, plans, ours } = await tx(pool, async (c) => {
    const s = await settleOn(c, held, owner, fromCursor, null);
    let count = 0;
    for (const [part, g] of fromCursor) if (s.ours.has(part)) count += g.seqs.size;
    if (queued.length > 0) {
      const r = await c.query({ name: 'tl_finish_events', text: FINISH_QUEUED, values: [queued, claimId] });
      count += r.rowCount ?? 0;
    }
    return { n: count, ...s };
  }, relaxed);
  applySettled(held, plans, ours, null);
  return n;
}
