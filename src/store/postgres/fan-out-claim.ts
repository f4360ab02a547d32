// A PostgreSQL fan-out claim (claimEvents, docs/fan-out-cursor-postgres.md): a look outside a
// transaction at what may be done, then in one transaction the partitions taken
// (fan-out-takeover.ts), due dispatch_queue rows (an event some claim left unfinished claimed
// alone), the partitions' events read oldest head first, what earlier fan-outs of them settled
// (`stored`), and the cursor rows written: each partition read from leased to the claim's
// owner, one left with nothing open released. The store object's memory of its partitions is
// replaced once the transaction commits.
import type pg from 'pg';
import { partKey, type DispatchEvent } from '../delivery-contract.ts';
import { DELIVERED_SEQ_SPAN } from '../delivery-views.ts';
import { ownerOf } from '../claim-owner.ts';
import { tx } from './connection.ts';
import { toPgEvent, type PgEventRow } from './rows.ts';
import { partOf, cmpKey, maxKey, writeCursors, type CursorRow, type CursorWrite, type HeldPart, type Key, type OpenEvent } from './fan-out-cursor.ts';
import type { Held } from './fan-out-held.ts';
import { lapsedOf, takePartitions } from './fan-out-takeover.ts';
import { DROP_PURGED, DUE_QUEUED, EVENTS_BY_SEQ, LEASE_QUEUED, LOCK_CURSORS, LOOK, READ, SETTLED } from './fan-out-sql.ts';

/** An event row as the claims read it, with its transaction id. */
type ClaimRow = PgEventRow & { fx?: string; queued_held_for?: string | null; queued?: boolean };

const keyOf = (r: ClaimRow): Key => ({ x: BigInt(r.fx!), s: Number(r.seq) });

/** What an earlier, unfinished fan-out of these events settled (their rows, and the pairs attempts delivered with none). */
async function storedOf(c: pg.ClientBase, rows: readonly ClaimRow[]): Promise<Map<number, Set<string>>> {
  const stored = new Map<number, Set<string>>();
  if (rows.length === 0) return stored;
  const seqs = rows.map((r) => Number(r.seq));
  const { rows: parts } = await c.query<{ event_seq: number; destination_id: string; part: number }>({ name: 'tl_claim_stored', text: SETTLED,
    values: [seqs, Math.min(...seqs), Math.max(...seqs), DELIVERED_SEQ_SPAN, [...new Set(rows.map((r) => r.script_id))]] });
  for (const p of parts) {
    let set = stored.get(p.event_seq);
    if (set === undefined) stored.set(p.event_seq, (set = new Set()));
    set.add(partKey(p.destination_id, p.part));
  }
  return stored;
}

/** DeliveryStore.claimEvents for the partitions `held` of one store object (its caller runs one write at a time). */
export async function claimEvents(pool: pg.Pool, held: Held, claimId: string, now: number, leaseMs: number, limit: number): Promise<DispatchEvent[]> {
  const owner = ownerOf(claimId);
  const mineParts = [...held].filter(([, h]) => h.owner === owner).map(([p]) => p);
  const retake = mineParts.flatMap((p) => held.get(p)!.open.filter((e) => e.claimId === claimId && !e.completed && !e.settled));
  const room = limit - retake.length;
  const { rows: look } = await pool.query<CursorRow & { due: boolean; part: number | null; head: number | null }>(
    { name: 'tl_fan_look', text: LOOK, values: [now, owner, mineParts, claimId] });
  const due = look[0].due;
  const cands = new Map(look.filter((r) => r.part !== null).map((r) => [r.part, r]));
  // A partition held here whose lease another owner has taken: what it had open is that owner's now.
  for (const p of mineParts) if (cands.get(p)?.lease_owner !== owner) held.delete(p);
  // The partitions with something to read, oldest head first: read in that order until the batch is full.
  const chosen = room <= 0 ? [] : [...cands.values()].filter((x) => x.head !== null).sort((a, b) => Number(a.head) - Number(b.head)).map((r) => r.part);
  const lock = new Set(chosen);
  for (const p of mineParts) {
    const h = held.get(p);
    if (h === undefined) continue;
    if (lapsedOf(h, claimId, now).length > 0 || h.leaseUntil - now < leaseMs / 2 || h.open.some((e) => e.claimId === claimId)) lock.add(p);
  }
  if (!due && lock.size === 0) return [];

  const { out, applied } = await tx(pool, async (c) => {
    const { rows: locked } = lock.size === 0 ? { rows: [] as CursorRow[] }
      : await c.query<CursorRow>({ name: 'tl_fan_lock', text: LOCK_CURSORS, values: [[...lock], now, owner] });
    const { state, queued: handedBack } = await takePartitions(c, held, locked, owner, claimId, now);
    const queued = handedBack || due;
    // The retaken events of partitions still ours (a partition lost meanwhile: they are its new holder's).
    const retaken = retake.filter((e) => state.has(e.part));

    // 1. Due dispatch_queue rows (held, replayed, interrupted): an event some claim left unfinished is claimed alone.
    const interrupted = new Map<number, number>();
    /** The claim stopped before a suspect (an interrupted event): nothing after it, the suspect goes alone next. */
    let stopped = false;
    let queueRows: ClaimRow[] = [];
    if (queued && room > 0) {
      const { rows: dueRows } = await c.query<{ event_seq: number; map_claims: number; lease_owner: string | null }>(DUE_QUEUED, [claimId, now, room]);
      const take: number[] = [];
      for (const d of dueRows) {
        const n = d.lease_owner === claimId ? Math.max(0, d.map_claims - 1) : d.map_claims;
        if (n > 0 && take.length + retaken.length > 0) {
          stopped = true;
          break;
        }
        take.push(d.event_seq);
        if (n > 0) {
          interrupted.set(d.event_seq, n);
          break;
        }
      }
      if (take.length > 0) {
        ({ rows: queueRows } = await c.query<ClaimRow>(LEASE_QUEUED, [claimId, now + leaseMs, take]));
        // Queue rows whose event was purged: nothing left to deliver.
        if (queueRows.length < take.length) await c.query(DROP_PURGED, [claimId]);
      }
    }

    // 2. The partitions, oldest head first, unless an interrupted event was taken.
    const left = room - queueRows.length;
    const reads = interrupted.size > 0 || stopped || left <= 0 ? [] : chosen.filter((p) => state.has(p)).map((p) => ({ part: p, from: state.get(p)!.pos.claimed }));
    const { rows: read } = reads.length === 0 ? { rows: [] as ClaimRow[] } : await c.query<ClaimRow>({ name: 'tl_fan_read', text: READ,
      values: [reads.map((r) => r.part), reads.map((r) => r.from.x.toString()), reads.map((r) => r.from.s), left] });
    const fresh = read.filter((r) => r.queued !== true);
    const { rows: again } = retaken.length === 0 ? { rows: [] as ClaimRow[] }
      : await c.query<ClaimRow>(EVENTS_BY_SEQ, [retaken.map((e) => e.key.s)]);

    // What earlier fan-outs settled, for the events fanned out before: queued ones, retaken ones, and those a partition saw already.
    const seen = (r: ClaimRow) => cmpKey(keyOf(r), state.get(partOf(Number(r.seq)))!.pos.seen) <= 0;
    const stored = await storedOf(c, [...queueRows, ...again, ...fresh.filter(seen)]);

    // The positions: each partition read from is leased to the owner; one left with nothing open is released.
    const writes: CursorWrite[] = [];
    const after = new Map<number, HeldPart | null>();
    const leaseUntil = now + leaseMs;
    for (const [part, s] of state) {
      const passed = read.filter((r) => partOf(Number(r.seq)) === part).sort((a, b) => cmpKey(keyOf(a), keyOf(b)));
      const mine = passed.filter((r) => r.queued !== true);
      const open = [...s.open.map((e) => (e.claimId === claimId && !e.completed ? { ...e, leaseUntil } : e)),
        ...mine.map((r): OpenEvent => ({ key: keyOf(r), part, claimId, leaseUntil, completed: false, settled: false }))];
      const claimed = passed.length === 0 ? s.pos.claimed : keyOf(passed[passed.length - 1]);
      const pos = { ...s.pos, claimed, seen: maxKey(s.pos.seen, claimed) };
      if (open.length === 0) {
        const rest = { cursor: pos.claimed, mapped: pos.claimed, claimed: pos.claimed, seen: pos.seen };
        if (s.changed || passed.length > 0) writes.push({ part, pos: rest, owner: null, leaseUntil: null });
        after.set(part, null);
      } else {
        writes.push({ part, pos, owner, leaseUntil });
        after.set(part, { owner, pos, leaseUntil, leaseMs, open });
      }
    }
    await writeCursors(c, writes, null);

    const events = [...queueRows, ...again, ...fresh].sort((a, b) => Number(a.seq) - Number(b.seq)).map((r): DispatchEvent => {
      const heldFor = r.queued_held_for;
      const e: DispatchEvent = heldFor === undefined || heldFor === null ? { seq: Number(r.seq), event: toPgEvent(r) }
        : { seq: Number(r.seq), event: toPgEvent(r), heldFor: JSON.parse(heldFor) as string[] };
      const parts = stored.get(e.seq);
      if (parts !== undefined) e.stored = parts;
      const n = interrupted.get(e.seq);
      if (n !== undefined) e.interrupted = n;
      return e;
    });
    return { out: events, applied: after };
    // Without bitmap scans: READ's planner otherwise read a backlog's whole partition (a bitmap scan and a
    // sort, ~10 times the blocks) to return the first few hundred in key order, which the index holds in order.
  }, { relaxed: true, first: 'SET LOCAL enable_bitmapscan = off' });
  for (const [part, h] of applied) {
    if (h === null) held.delete(part);
    else held.set(part, h);
  }
  return out;
}
