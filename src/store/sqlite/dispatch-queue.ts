// SQLite's fan-out claims, the fan-out's side of delivery: accepted events claimed under a
// lease, from the events table after the fan-out cursor (fan-out-cursor.ts) and from the
// dispatch queue's exceptions (held events, events queued again by replay or left by a claim
// that died), in seq order, each with what an earlier, unfinished fan-out settled for it (its
// rows, and the pairs attempts delivered without a row, delivered-queries.ts); a fan-out's
// rows committed with each event settling (or staying open, leased, for its handoffs, or
// held in the queue), and events settled once their handed-off deliveries all have rows.
// The lanes' side (claims, attempt records, handed-off rows): delivery-store.ts.
import type Database from 'better-sqlite3';
import { partKey, type DeliveryStore, type DispatchEvent, type FanOutCommit } from '../delivery-contract.ts';
import { toEventRecord, type SeqEventRow as EventRow } from '../event-rows.ts';
import type { relaxedCommit } from './relaxed-commit.ts';
import { deliveredSeq } from './delivered-queries.ts';
import type { FanOutCursor } from './fan-out-cursor.ts';

/**
 * Delivery rows a fan-out commits per transaction at most (whole events). A transaction holds
 * the database's one write lock, and intake's commits (acknowledgements) wait for it: a
 * 200-event fan-out (800 rows) held it 15-40 ms under load; 100 rows take ~3 ms alone (~30 µs
 * a row with ~1.5 KB items), longer only while the holder waits for a core.
 */
export const FAN_OUT_ROWS_PER_COMMIT = 100;

/** A delivery's item, kept while it may still be sent (delivery_items: migration 16). */
export const PUT_ITEM_SQL = 'INSERT OR REPLACE INTO delivery_items (delivery_id, item) VALUES (?, ?)';

/** What claimEvents reads of a queue row beside its event. */
interface QueuedRow {
  queued_seq: number;
  queued_held_for: string | null;
  queued_map_claims: number;
  queued_owner: string | null;
}

export function sqliteDispatchQueue(
  db: Database.Database, relaxed: ReturnType<typeof relaxedCommit>, cursor: FanOutCursor,
): Pick<DeliveryStore, 'claimEvents' | 'completeFanOut' | 'finishEvents'> {
  const q = {
    // The due queue entries with their event rows in one statement (null columns: the event was purged).
    queueDue: db.prepare<[number, string, number], EventRow & QueuedRow>(
      `SELECT q.event_seq AS queued_seq, q.held_for AS queued_held_for, q.map_claims AS queued_map_claims, q.lease_owner AS queued_owner, e.*
       FROM dispatch_queue q LEFT JOIN events e ON e.seq = q.event_seq
       WHERE q.lease_until IS NULL OR q.lease_until <= ? OR q.lease_owner = ? ORDER BY q.event_seq LIMIT ?`),
    // Whether anything is claimable: an idle fan-out's look costs a read, not a write transaction.
    anyDue: db.prepare<[number, string], { x: number }>(
      'SELECT 1 AS x FROM dispatch_queue WHERE lease_until IS NULL OR lease_until <= ? OR lease_owner = ? LIMIT 1'),
    // claim, lease end, claims to add (0: the claim's own retake), seq.
    leaseEvent: db.prepare('UPDATE dispatch_queue SET lease_owner = ?, lease_until = ?, map_claims = map_claims + ? WHERE event_seq = ?'),
    // The rows an earlier, unfinished fan-out of the event stored (none for an event fanned out the first time).
    // and those its handed-off deliveries' attempts delivered without a row (migration 20).
    storedParts: db.prepare<{ seq: number; script: string }, { destination_id: string; part: number }>(
      `SELECT destination_id, part FROM deliveries WHERE event_seq = @seq AND part IS NOT NULL
       UNION ALL SELECT a.destination_id, j.value ->> 1 FROM destinations dd CROSS JOIN delivery_attempts a, json_each(a.delivered) j
         WHERE dd.script_id = @script AND ${deliveredSeq('@seq', 'dd.id')}`),
    // An event staying queued for its handoffs: its mapping finished.
    stillLeased: db.prepare('UPDATE dispatch_queue SET map_claims = 0 WHERE event_seq = ? AND lease_owner = ?'),
    dropQueued: db.prepare('DELETE FROM dispatch_queue WHERE event_seq = ?'),
    unqueue: db.prepare('DELETE FROM dispatch_queue WHERE event_seq = ? AND lease_owner = ?'),
    // held_for, hold claim, hold until, seq, claim.
    holdQueued: db.prepare('UPDATE dispatch_queue SET held_for = ?, lease_owner = ?, lease_until = ?, map_claims = 0 WHERE event_seq = ? AND lease_owner = ?'),
    // An event from the cursor held: into the queue. held_for, hold claim, hold until, seq.
    holdNew: db.prepare(`INSERT INTO dispatch_queue (held_for, lease_owner, lease_until, event_seq) VALUES (?, ?, ?, ?)
      ON CONFLICT (event_seq) DO UPDATE SET held_for = excluded.held_for, lease_owner = excluded.lease_owner, lease_until = excluded.lease_until, map_claims = 0`),
    // Positional (the fan-out's hottest statement; named parameters cost ~1.5 µs more a row):
    // seq, script, destination id, type, event id, part, status, reason, next, message, received, now (created), now (updated).
    insert: db.prepare<unknown[], { id: number }>(`INSERT INTO deliveries (event_seq, script_id, destination_id, destination_type, event_id, part, status,
        skip_reason, attempts, next_attempt_at, last_error, received_at, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?) ON CONFLICT (event_seq, destination_id, part) DO NOTHING RETURNING id`),
    putItem: db.prepare(PUT_ITEM_SQL),
    finishEvent: db.prepare('DELETE FROM dispatch_queue WHERE event_seq = ? AND lease_owner = ?'),
  };

  /** A claimed event with what an earlier fan-out of it settled. */
  const dispatchEvent = (seq: number, row: EventRow, held: string | null, interrupted: number): DispatchEvent => {
    const e: DispatchEvent = held === null ? { seq, event: toEventRecord(row) } : { seq, event: toEventRecord(row), heldFor: JSON.parse(held) as string[] };
    const parts = q.storedParts.all({ seq, script: row.script_id });
    if (parts.length > 0) e.stored = new Set(parts.map((p) => partKey(p.destination_id, p.part)));
    if (interrupted > 0) e.interrupted = interrupted;
    return e;
  };

  const claimEventsTx = db.transaction((claimId: string, now: number, leaseMs: number, limit: number): DispatchEvent[] => {
    const out: DispatchEvent[] = [];
    // The cursor first: taking it over queues what a gone holder was mapping, claimed below.
    const offered = cursor.offer(claimId, now, leaseMs, limit) ?? [];
    const queued = q.queueDue.all(now, claimId, limit);
    const fromCursor: number[] = [];
    // Both in seq order, merged: a suspect stops the claim wherever it comes.
    for (let i = 0, j = 0; out.length < limit && (i < queued.length || j < offered.length);) {
      const row = queued[i];
      const next = offered[j];
      if (row === undefined || (next !== undefined && next.seq < row.queued_seq)) {
        fromCursor.push(next.seq);
        out.push(dispatchEvent(next.seq, next, null, 0));
        j++;
        continue;
      }
      i++;
      const seq = row.queued_seq;
      if (next?.seq === seq) {
        cursor.queued(seq); // queued again by replay while open: the queue's now
        j++;
      }
      if (row.seq === null) {
        q.dropQueued.run(seq); // the event was purged: nothing left to deliver
        continue;
      }
      // Left unfinished by an earlier claim: mapped alone (its own claim's retake is no interruption).
      const retake = row.queued_owner === claimId;
      const interrupted = retake ? Math.max(0, row.queued_map_claims - 1) : row.queued_map_claims;
      if (interrupted > 0 && out.length > 0) break;
      q.leaseEvent.run(claimId, now + leaseMs, retake ? 0 : 1, seq);
      out.push(dispatchEvent(seq, row, row.queued_held_for, interrupted));
      if (interrupted > 0) break;
    }
    cursor.claimed(claimId, now, fromCursor);
    return out;
  });

  /** `items`: each result's delivery items as JSON text, serialised before the write lock is taken. */
  const completeTx = db.transaction((claimId: string, now: number, results: Parameters<DeliveryStore['completeFanOut']>[2], items: readonly (readonly (string | null)[])[]) => {
    let events = 0;
    // Events from the cursor, while its lease is still this claim's: settled, or mapped (handoffs).
    const open = cursor.holds(claimId);
    const settled: number[] = [];
    const mapped: number[] = [];
    const pendingByDestination = new Map<string, number>();
    const handedOff: number[] = [];
    // Each event is unqueued first (fenced), then the rows go in destination by destination:
    // one destination's rows of the commit sit on adjacent pages, so the transaction that
    // records its attempts rewrites (and writes to the WAL) a few pages, not one per event.
    const byDestination = new Map<string, [number, number][]>();
    for (const [i, r] of results.entries()) {
      const h = r.held;
      const handsOff = r.deliveries.some((d) => d.handoff === true);
      const fromCursor = open?.(r.seq);
      // Handed-off deliveries get their rows when recorded: until then the event stays open
      // (from the cursor) or queued, leased. A held one waits in the queue, leased to the hold.
      let fenced: boolean;
      if (fromCursor !== undefined) {
        if (fromCursor.mapped) continue; // committed before
        if (h !== undefined) q.holdNew.run(JSON.stringify(h.destinationIds), h.claimId, h.leaseUntil, r.seq);
        if (handsOff && h === undefined) mapped.push(r.seq);
        else settled.push(r.seq);
        fenced = true;
      } else {
        fenced = h !== undefined
          ? q.holdQueued.run(JSON.stringify(h.destinationIds), h.claimId, h.leaseUntil, r.seq, claimId).changes > 0
          : handsOff ? q.stillLeased.run(r.seq, claimId).changes > 0 : q.unqueue.run(r.seq, claimId).changes > 0;
      }
      if (!fenced) continue; // lease lost: the new holder fans it out
      events++;
      if (handsOff) handedOff.push(r.seq);
      r.deliveries.forEach((d, index) => {
        if (d.handoff === true) return;
        let rows = byDestination.get(d.destinationId);
        if (rows === undefined) byDestination.set(d.destinationId, (rows = []));
        rows.push([i, index]);
      });
    }
    for (const rows of byDestination.values()) {
      for (const [i, index] of rows) {
        const r = results[i];
        const d = r.deliveries[index];
        const row = q.insert.get(
          r.seq, r.scriptId, d.destinationId, d.destinationType, r.eventId, d.part, d.status,
          d.reason ?? null, d.status !== 'pending' ? null : now, d.message ?? null, r.receivedAt, now, now,
        );
        const item = items[i][index];
        if (row !== undefined && item !== null) q.putItem.run(row.id, item);
        if (row !== undefined && d.status === 'pending') pendingByDestination.set(d.destinationId, (pendingByDestination.get(d.destinationId) ?? 0) + 1);
      }
    }
    if (settled.length > 0 || mapped.length > 0) cursor.completed(now, settled, mapped);
    return { events, pendingByDestination, handedOff };
  });

  const finishEventsTx = db.transaction((claimId: string, seqs: readonly number[]) => {
    const open = cursor.holds(claimId);
    const settled: number[] = [];
    let n = 0;
    for (const seq of seqs) {
      if (open?.(seq)?.mapped === true) settled.push(seq);
      else n += q.finishEvent.run(seq, claimId).changes;
    }
    if (settled.length > 0) cursor.finished(settled);
    return n + settled.length;
  });

  /** Runs a transaction that reads or moves the cursor: should it fail, what this object holds of the cursor is dropped (the row is the truth). */
  function withCursor<A extends unknown[], R>(tx: Database.Transaction<(...args: A) => R>, ...args: A): R {
    try {
      return relaxed(tx, ...args);
    } catch (err) {
      cursor.forget();
      throw err;
    }
  }

  return {
    async claimEvents(claimId, now, leaseMs, limit) {
      if (q.anyDue.get(now, claimId) === undefined && !cursor.hasWork(claimId, now, leaseMs)) return [];
      return withCursor(claimEventsTx, claimId, now, leaseMs, limit);
    },
    async completeFanOut(claimId, now, results) {
      // In runs of whole events of at most FAN_OUT_ROWS_PER_COMMIT rows: each event's rows and
      // its unqueue stay in one transaction, and intake's commits get the lock in between.
      const commit: FanOutCommit = { events: 0, pendingByDestination: new Map(), handedOff: [] };
      for (let start = 0; start < results.length;) {
        let end = start;
        for (let rows = 0; end < results.length && (end === start || rows + results[end].deliveries.length <= FAN_OUT_ROWS_PER_COMMIT); end++) {
          rows += results[end].deliveries.length;
        }
        const run = results.slice(start, end);
        const part = withCursor(completeTx, claimId, now, run, run.map((r) => r.deliveries.map((d) => (d.item === null || d.handoff === true ? null : JSON.stringify(d.item)))));
        commit.events += part.events;
        for (const [id, n] of part.pendingByDestination) commit.pendingByDestination.set(id, (commit.pendingByDestination.get(id) ?? 0) + n);
        for (const seq of part.handedOff) commit.handedOff.push(seq);
        start = end;
      }
      return commit;
    },
    async finishEvents(claimId, seqs) {
      return seqs.length === 0 ? 0 : withCursor(finishEventsTx, claimId, seqs);
    },
  };
}
