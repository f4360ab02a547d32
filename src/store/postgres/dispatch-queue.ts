// PostgreSQL's fan-out side of delivery: accepted events read from the event log after each
// partition's cursor (fan-out-cursor.ts, docs/fan-out-cursor-postgres.md), and the exceptions
// dispatch_queue still holds (held, replayed, left unsettled by a stopped holder) claimed with
// FOR UPDATE SKIP LOCKED, each with the rows an earlier, unfinished fan-out stored for it; a
// fan-out's rows committed with its events settling (the cursor moving past them) or leaving
// the queue, or staying open for their handoffs until those are recorded (finishEvents).
// The lanes' side: delivery-store.ts. Commits are relaxed like the rest of the bookkeeping.
import type pg from 'pg';
import { partKey, type DeliveryStore, type DispatchEvent, type FanOutResult } from '../delivery-contract.ts';
import { DELIVERED_SEQ_SPAN } from '../delivery-views.ts';
import { ownerOf } from '../claim-owner.ts';
import { tx } from './connection.ts';
import { WORK_CHANNEL } from './notify.ts';
import { toPgEvent, type PgEventRow } from './rows.ts';
import {
  CURSOR_COLUMNS, FAN_EVENTS, HORIZON, partOf, cmpKey, fanPart, handBack, maxKey, positionsOf, sameKey, settle, writeCursors,
  type CursorRow, type CursorWrite, type HeldPart, type Key, type OpenEvent, type Positions, type Settled,
} from './fan-out-cursor.ts';

const relaxed = { relaxed: true };

/**
 * The deliveries of events $1 (seqs $2..$3, of accounts $5) an earlier fan-out settled: their rows,
 * and the pairs attempts list as delivered without one (delivery_attempts_delivered_seq, for each
 * destination of those accounts: an attempt lists seqs at most $4 below its last), a replayed pair (null) aside.
 */
const SETTLED = `SELECT event_seq, destination_id, part FROM deliveries WHERE event_seq = ANY($1::bigint[]) AND part IS NOT NULL
  UNION ALL
  SELECT (p.v->>0)::bigint, a.destination_id, (p.v->>1)::int FROM delivery_attempts a CROSS JOIN LATERAL jsonb_array_elements(a.delivered::jsonb) AS p(v)
  WHERE a.destination_id IN (SELECT id FROM destinations WHERE script_id = ANY($5::text[]))
    AND a.delivered IS NOT NULL AND a.last_seq >= $2 AND a.last_seq <= $3::bigint + $4 AND a.first_seq <= $3
    AND p.v <> 'null'::jsonb AND (p.v->>0)::bigint = ANY($1::bigint[])`;

/** A fan-out result with deliveries handed straight to a lane: its event stays open until they have rows. */
const handsOff = (r: FanOutResult): boolean => r.deliveries.some((d) => d.handoff === true);

/** An event row as the claims read it, with its transaction id. */
type ClaimRow = PgEventRow & { fx?: string; queued_held_for?: string | null; queued?: boolean };

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

/** Events of transactions at or after the horizon are not read yet: one still running may add events before them (fan-out-cursor.ts). */
const BELOW_HORIZON = `e.fan_xid < ${HORIZON}`;

/**
 * What a claim may do, in one query outside a transaction (an idle fan-out's look): whether
 * dispatch_queue has due rows, and each partition it may take (free, expired, or its owner's:
 * $2; $3 the partitions this store object holds for it) with the first event it could read
 * after its position (its head; none: nothing to read). Only the head: counting further read
 * every event of a backlog's partitions (not yet all-visible, so from the heap) on every claim.
 */
const LOOK = `SELECT d.due, c.* FROM (SELECT EXISTS (SELECT 1 FROM dispatch_queue WHERE lease_until IS NULL OR lease_until <= $1 OR lease_owner = $4) AS due) d
  LEFT JOIN LATERAL (SELECT ${CURSOR_COLUMNS}, h.head FROM fanout_cursors c
    CROSS JOIN LATERAL (SELECT c.lease_owner IS NOT DISTINCT FROM $2 AND c.part = ANY($3::int[]) AS mine) m
    LEFT JOIN LATERAL (SELECT e.seq AS head FROM events e
      WHERE ${fanPart('e')} = c.part AND ${FAN_EVENTS('e')}
        AND (e.fan_xid, e.seq) > (CASE WHEN m.mine THEN c.claimed_xid ELSE c.cursor_xid END, CASE WHEN m.mine THEN c.claimed_seq ELSE c.cursor_seq END)
        AND ${BELOW_HORIZON}
      ORDER BY e.fan_xid, e.seq LIMIT 1) h ON true
    WHERE c.lease_owner IS NULL OR c.lease_until <= $1 OR c.lease_owner = $2) c ON true`;

/**
 * The events of partitions p (in the order given) after (x, s), in key order, $4 in all: the
 * first partition's, then the next one's while room is left. Each partition's are a prefix of
 * its events after its position (the nested loop emits each partition's ordered scan in turn).
 * An event in dispatch_queue is read too (`queued`: the position passes it, it is not claimed
 * from here): a NOT EXISTS in the scan made the planner read and sort a whole partition.
 */
const READ = `SELECT e.*, e.fan_xid::text AS fx, EXISTS (SELECT 1 FROM dispatch_queue q WHERE q.event_seq = e.seq) AS queued
  FROM unnest($1::int[], $2::xid8[], $3::bigint[]) AS p(part, x, s)
  CROSS JOIN LATERAL (SELECT * FROM events e WHERE ${fanPart('e')} = p.part AND ${FAN_EVENTS('e')} AND (e.fan_xid, e.seq) > (p.x, p.s)
    AND ${BELOW_HORIZON} ORDER BY e.fan_xid, e.seq LIMIT $4) e LIMIT $4`;

const keyOf = (r: ClaimRow): Key => ({ x: BigInt(r.fx!), s: Number(r.seq) });

export function pgDispatchQueue(pool: pg.Pool): PgFanOut {
  /** The partitions this store object holds, by part. */
  const held = new Map<number, HeldPart>();
  /** Cursor writes of this store object, one at a time: each computes from `held` and applies after its commit. */
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = chain.then(fn, fn);
    chain = run.catch(() => undefined);
    return run;
  };
  /** The open event `seq` of a partition held for `owner`, with its partition. */
  const openOf = (seq: number, owner: string): { part: HeldPart; e: OpenEvent } | undefined => {
    const p = held.get(partOf(seq));
    if (p === undefined || p.owner !== owner) return undefined;
    const e = p.open.find((o) => o.key.s === seq && !o.settled);
    return e === undefined ? undefined : { part: p, e };
  };

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

  /** A held partition's lease after a write at `now` (null: no clock, as finishEvents has none: kept). */
  const renewed = (h: HeldPart, now: number | null): number => (now === null ? h.leaseUntil : Math.max(h.leaseUntil, now + h.leaseMs));

  /** Settles events of partitions held for `owner`, fenced on its lease: the settle plans, and the partitions still ours. */
  async function settleOn(c: pg.ClientBase, owner: string, byPart: Map<number, { seqs: Set<number>; mapped: Key | null }>, now: number | null) {
    const plans: Settled[] = [];
    for (const [part, { seqs, mapped }] of byPart) plans.push(settle(part, held.get(part)!, seqs, mapped));
    const ours = await writeCursors(c, plans.map((p) => (p.released ? { part: p.part, pos: p.pos, owner: null, leaseUntil: null }
      : { part: p.part, pos: p.pos, owner, leaseUntil: renewed(held.get(p.part)!, now) })), owner);
    return { plans, ours };
  }

  /** After a settle committed: the partitions written move on, the others (their lease was lost) are forgotten. */
  function applySettled(plans: readonly Settled[], ours: ReadonlySet<number>, now: number | null): void {
    for (const p of plans) {
      const h = held.get(p.part);
      if (h === undefined) continue;
      if (!ours.has(p.part) || p.released) held.delete(p.part);
      else held.set(p.part, { ...h, pos: p.pos, open: p.open, leaseUntil: renewed(h, now) });
    }
  }

  return {
    claimEvents: (claimId, now, leaseMs, limit) => serial(async () => {
      const owner = ownerOf(claimId);
      const mineParts = [...held].filter(([, h]) => h.owner === owner).map(([p]) => p);
      const retake = mineParts.flatMap((p) => held.get(p)!.open.filter((e) => e.claimId === claimId && !e.completed && !e.settled));
      // Events another claim of this store object left open past their lease go to dispatch_queue (as its rows would
      // have lapsed): completed ones owe rows for handoffs, the others were being mapped (interrupted once).
      const lapsed = (p: number) => held.get(p)!.open.filter((e) => !e.settled && e.claimId !== claimId && e.leaseUntil <= now);
      const room = limit - retake.length;
      const { rows: look } = await pool.query<CursorRow & { due: boolean; part: number | null; head: number | null }>(
        { name: 'tl_fan_look', text: LOOK, values: [now, owner, mineParts, claimId] });
      const due = look[0].due;
      const cands = new Map(look.filter((r) => r.part !== null).map((r) => [r.part, r]));
      // A partition held here whose lease another owner has taken: what it had open is that owner's now.
      for (const p of mineParts) if (cands.get(p)?.lease_owner !== owner) held.delete(p);
      const isMine = (r: CursorRow) => r.lease_owner === owner && held.get(r.part)?.owner === owner;
      // The partitions with something to read, oldest head first: read in that order until the batch is full.
      const chosen = room <= 0 ? [] : [...cands.values()].filter((x) => x.head !== null).sort((a, b) => Number(a.head) - Number(b.head)).map((r) => r.part);
      const lock = new Set(chosen);
      for (const p of mineParts) {
        const h = held.get(p);
        if (h === undefined) continue;
        if (lapsed(p).length > 0 || h.leaseUntil - now < leaseMs / 2 || h.open.some((e) => e.claimId === claimId)) lock.add(p);
      }
      if (!due && lock.size === 0) return [];

      const { out, applied } = await tx(pool, async (c) => {
        const { rows: locked } = lock.size === 0 ? { rows: [] as CursorRow[] } : await c.query<CursorRow>({ name: 'tl_fan_lock',
          text: `SELECT ${CURSOR_COLUMNS} FROM fanout_cursors c WHERE c.part = ANY($1::int[])
            AND (c.lease_owner IS NULL OR c.lease_until <= $2 OR c.lease_owner = $3) ORDER BY c.part FOR UPDATE SKIP LOCKED`, values: [[...lock], now, owner] });
        const state = new Map<number, { pos: Positions; open: OpenEvent[]; changed: boolean }>();
        const takeOver: number[] = [];
        const moved: OpenEvent[] = [];
        for (const r of locked) {
          const pos = positionsOf(r);
          if (isMine(r)) {
            const h = held.get(r.part)!;
            const gone = lapsed(r.part);
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
        let queued = due;
        if (takeOver.length > 0) queued = (await handBack(c, 'c.part = ANY($1::int[])', [takeOver], false)) > 0 || queued;
        if (moved.length > 0) {
          await c.query(`INSERT INTO dispatch_queue (event_seq, lease_owner, lease_until, map_claims)
            SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::int[]) ON CONFLICT (event_seq) DO NOTHING`,
          [moved.map((e) => e.key.s), moved.map((e) => e.claimId), moved.map((e) => e.leaseUntil), moved.map((e) => (e.completed ? 0 : 1))]);
          queued = true;
        }
        // The retaken events of partitions still ours (a partition lost meanwhile: they are its new holder's).
        const retaken = retake.filter((e) => state.has(e.part));

        // 1. Due dispatch_queue rows (held, replayed, interrupted): an event some claim left unfinished is claimed alone.
        const interrupted = new Map<number, number>();
        /** The claim stopped before a suspect (an interrupted event): nothing after it, the suspect goes alone next. */
        let stopped = false;
        let queueRows: ClaimRow[] = [];
        if (queued && room > 0) {
          const { rows: dueRows } = await c.query<{ event_seq: number; map_claims: number; lease_owner: string | null }>(
            `SELECT event_seq, map_claims, lease_owner FROM dispatch_queue WHERE lease_until IS NULL OR lease_until <= $2 OR lease_owner = $1
             ORDER BY event_seq LIMIT $3 FOR UPDATE SKIP LOCKED`, [claimId, now, room]);
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
            // SET reads the row as it was: a retake by the same claim adds no count.
            ({ rows: queueRows } = await c.query<ClaimRow>(`WITH leased AS (
                UPDATE dispatch_queue q SET lease_owner = $1, lease_until = $2,
                  map_claims = q.map_claims + CASE WHEN q.lease_owner IS NOT DISTINCT FROM $1 THEN 0 ELSE 1 END
                WHERE q.event_seq = ANY($3::bigint[]) RETURNING q.event_seq, q.held_for)
              SELECT e.*, l.held_for AS queued_held_for FROM leased l JOIN events e ON e.seq = l.event_seq
              -- The events by their key as well: without it a batch of a few hundred was joined by reading all of events.
              WHERE e.seq = ANY($3::bigint[]) ORDER BY e.seq`, [claimId, now + leaseMs, take]));
            // Queue rows whose event was purged: nothing left to deliver.
            if (queueRows.length < take.length) {
              await c.query(`DELETE FROM dispatch_queue q WHERE q.lease_owner = $1 AND NOT EXISTS (SELECT 1 FROM events e WHERE e.seq = q.event_seq)`, [claimId]);
            }
          }
        }

        // 2. The partitions, oldest head first, unless an interrupted event was taken.
        const left = room - queueRows.length;
        const reads = interrupted.size > 0 || stopped || left <= 0 ? [] : chosen.filter((p) => state.has(p)).map((p) => ({ part: p, from: state.get(p)!.pos.claimed }));
        const { rows: read } = reads.length === 0 ? { rows: [] as ClaimRow[] } : await c.query<ClaimRow>({ name: 'tl_fan_read', text: READ,
          values: [reads.map((r) => r.part), reads.map((r) => r.from.x.toString()), reads.map((r) => r.from.s), left] });
        const fresh = read.filter((r) => r.queued !== true);
        const { rows: again } = retaken.length === 0 ? { rows: [] as ClaimRow[] }
          : await c.query<ClaimRow>('SELECT e.*, e.fan_xid::text AS fx FROM events e WHERE e.seq = ANY($1::bigint[])', [retaken.map((e) => e.key.s)]);

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
    }),

    completeFanOut: (claimId, now, results) => serial(async () => {
      const owner = ownerOf(claimId);
      // Events this store object took from a partition under this claim, and those it took from dispatch_queue.
      const fromCursor = new Map<number, { seqs: Set<number>; mapped: Key | null }>();
      const cursorResults = new Map<number, FanOutResult>();
      const queueResults: FanOutResult[] = [];
      for (const r of results) {
        const o = openOf(r.seq, owner);
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
          : await settleOn(c, owner, fromCursor, now);
        for (const r of cursorResults.values()) if (oursParts.has(partOf(r.seq))) ours.add(r.seq);
        // dispatch_queue events neither held nor handing off leave it (fenced on the lease); those that handed
        // deliveries off stay, leased to the claim, until those have rows (finishEvents): their mapping is counted finished.
        const unqueue: number[] = [];
        const keep: number[] = [];
        for (const r of queueResults) if (r.held === undefined) (handsOff(r) ? keep : unqueue).push(r.seq);
        if (unqueue.length > 0 || keep.length > 0) {
          const { rows: fenced } = await c.query<{ event_seq: number }>(`WITH gone AS (
              DELETE FROM dispatch_queue WHERE event_seq = ANY($1::bigint[]) AND lease_owner = $3 RETURNING event_seq),
            kept AS (UPDATE dispatch_queue SET map_claims = 0 WHERE event_seq = ANY($2::bigint[]) AND lease_owner = $3 RETURNING event_seq)
            SELECT event_seq FROM gone UNION ALL SELECT event_seq FROM kept`, [unqueue, keep, claimId]);
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
          const { rows: kept } = await c.query<{ event_seq: number }>(`WITH x AS (SELECT * FROM unnest($1::bigint[], $2::text[], $6::boolean[]) AS x(seq, owed, fresh)),
              upd AS (UPDATE dispatch_queue q SET held_for = x.owed, lease_owner = $3, lease_until = $4, map_claims = 0
                FROM x WHERE NOT x.fresh AND q.event_seq = x.seq AND q.lease_owner = $5 RETURNING q.event_seq),
              ins AS (INSERT INTO dispatch_queue (event_seq, held_for, lease_owner, lease_until, map_claims)
                SELECT seq, owed, $3, $4, 0 FROM x WHERE x.fresh
                ON CONFLICT (event_seq) DO UPDATE SET held_for = excluded.held_for, lease_owner = excluded.lease_owner,
                  lease_until = excluded.lease_until, map_claims = 0 RETURNING event_seq)
            SELECT event_seq FROM upd UNION ALL SELECT event_seq FROM ins`,
          [g.seqs, g.owed, g.claimId, g.leaseUntil, claimId, g.cursor]);
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
          // A row an earlier fan-out of the event stored is left as it is (its item too); only the
          // pending rows inserted now are counted. The items of the rows inserted go to
          // delivery_items, keyed by the id each row got (found again by its unique key).
          const { rows: pending } = await c.query<{ destination_id: string; n: number }>(`WITH u AS (
              SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::text[], $9::text[],
                $10::bigint[], $11::text[], $12::bigint[]) WITH ORDINALITY AS u(s, a, d, t, e, p, i, st, r, n, m, rc, o)),
            ins AS (
              INSERT INTO deliveries (event_seq, script_id, destination_id, destination_type, event_id, part, status,
                skip_reason, attempts, next_attempt_at, last_error, received_at, created_at, updated_at)
              SELECT s, a, d, t, e, p, st, r, 0, n, m, rc, $13, $13 FROM u ORDER BY o
              ON CONFLICT (event_seq, destination_id, part) DO NOTHING RETURNING id, event_seq, destination_id, part, status),
            items AS (
              INSERT INTO delivery_items (delivery_id, item)
              SELECT id, i FROM (SELECT DISTINCT ON (ins.id) ins.id, u.i FROM ins
                JOIN u ON u.s = ins.event_seq AND u.d = ins.destination_id AND u.p = ins.part ORDER BY ins.id, u.o) AS f
              WHERE i IS NOT NULL
              ON CONFLICT (delivery_id) DO UPDATE SET item = excluded.item)
            SELECT destination_id, count(*)::int AS n FROM ins WHERE status = 'pending' GROUP BY destination_id`,
          [...cols, now]);
          for (const p of pending) pendingByDestination.set(p.destination_id, p.n);
        }
        if (pendingByDestination.size > 0) await c.query(`NOTIFY ${WORK_CHANNEL}, 'deliveries'`);
        return { commit: { events: ours.size, pendingByDestination, handedOff }, plans, ours: oursParts };
      }, relaxed);
      // Committed: the partitions move on (completed events wait for their handoffs' rows); a lost one is forgotten.
      applySettled(plans, oursParts, now);
      for (const [seq] of cursorResults) {
        const o = openOf(seq, owner);
        if (o !== undefined && o.e.claimId === claimId) o.e.completed = true;
      }
      return commit;
    }),

    finishEvents: (claimId, seqs) => serial(async () => {
      if (seqs.length === 0) return 0;
      const owner = ownerOf(claimId);
      const fromCursor = new Map<number, { seqs: Set<number>; mapped: Key | null }>();
      const queued: number[] = [];
      for (const seq of seqs) {
        const o = openOf(seq, owner);
        if (o === undefined || o.e.claimId !== claimId || !o.e.completed) {
          queued.push(seq);
          continue;
        }
        let g = fromCursor.get(o.e.part);
        if (g === undefined) fromCursor.set(o.e.part, (g = { seqs: new Set(), mapped: null }));
        g.seqs.add(seq);
      }
      if (fromCursor.size === 0) {
        const r = await tx(pool, (c) => c.query({ name: 'tl_finish_events', text: 'DELETE FROM dispatch_queue WHERE event_seq = ANY($1::bigint[]) AND lease_owner = $2',
          values: [queued, claimId] }), relaxed);
        return r.rowCount ?? 0;
      }
      const { n, plans, ours } = await tx(pool, async (c) => {
        const s = await settleOn(c, owner, fromCursor, null);
        let count = 0;
        for (const [part, g] of fromCursor) if (s.ours.has(part)) count += g.seqs.size;
        if (queued.length > 0) {
          const r = await c.query({ name: 'tl_finish_events', text: 'DELETE FROM dispatch_queue WHERE event_seq = ANY($1::bigint[]) AND lease_owner = $2',
            values: [queued, claimId] });
          count += r.rowCount ?? 0;
        }
        return { n: count, ...s };
      }, relaxed);
      applySettled(plans, ours, null);
      return n;
    }),

    async releaseCursors(c, owner) {
      const n = await handBack(c, 'c.lease_owner = $1', [owner], true);
      for (const [p, h] of held) if (h.owner === owner) held.delete(p);
      return n;
    },

    async recoverCursors(c, now) {
      return handBack(c, 'c.lease_until <= $1', [now], true);
    },

    async backlog() {
      const own = [...held].map(([p, h]) => ({ p, from: h.pos.claimed }));
      const open = [...held.values()].reduce((n, h) => n + h.open.filter((e) => !e.settled).length, 0);
      const { rows } = await pool.query<{ n: number }>(`SELECT (SELECT count(*) FROM dispatch_queue)::int
        + (SELECT count(*) FROM fanout_cursors c LEFT JOIN unnest($1::int[], $2::xid8[], $3::bigint[]) AS o(part, x, s) ON o.part = c.part
          JOIN events e ON ${fanPart('e')} = c.part AND ${FAN_EVENTS('e')}
            AND (e.fan_xid, e.seq) > (coalesce(o.x, c.cursor_xid), coalesce(o.s, c.cursor_seq))
            AND NOT EXISTS (SELECT 1 FROM dispatch_queue q WHERE q.event_seq = e.seq))::int AS n`,
      [own.map((o) => o.p), own.map((o) => o.from.x.toString()), own.map((o) => o.from.s)]);
      return rows[0].n + open;
    },

    async cursorHolders() {
      const { rows } = await pool.query<{ owner: string }>('SELECT DISTINCT lease_owner AS owner FROM fanout_cursors WHERE lease_owner IS NOT NULL');
      return rows.map((r) => r.owner);
    },
  };
}
