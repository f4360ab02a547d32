// SQLite deliveries, the operator side: listing, attempts, replay, stats, the queue
// snapshot for metrics, and the retention purges (chunked, so intake never waits long).
// Each merges the rows with the deliveries delivered without one (delivered-queries.ts).
import type Database from 'better-sqlite3';
import {
  assembleStats, toAttemptView, toDeliveryView, toHealth, toPendingByDestination, type AttemptRow, type HealthRow,
  type PendingByDestinationRow, type ViewRow,
} from '../delivery-rows.ts';
import type {
  DeliveryStatus, DeliveryStore, QueueSnapshot, ReplayFilter,
} from '../delivery-contract.ts';
import { DERIVED_ID_BASE, MAPPING_FAILED } from '../delivery-contract.ts';
import { LISTED_EVENT, sqliteDeliveredQueries } from './delivered-queries.ts';

type Queries = Pick<DeliveryStore,
  'list' | 'attempts' | 'replay' | 'countReplayable' | 'stats' | 'health' | 'dispatchBacklog' | 'queueSnapshot' | 'purge' | 'purgeDedupKeys'>;


/** The partial index condition of deliveries_problems. */
const PROBLEMS = "d.status IN ('failed', 'dead')";
/** Deliveries of the events with a customer event id, through events_event_id and deliveries_event_part. */
const byEventId = (seqColumn: string) => `${seqColumn} IN (SELECT seq FROM events WHERE event_id = ?)`;

/** The deliveries a replay filter matches (limit aside), as a WHERE clause over `deliveries`. */
function replayable(f: ReplayFilter): { sql: string; args: unknown[] } {
  const where = [`status IN (${f.statuses.map(() => '?').join(', ')})`, '(part IS NOT NULL OR id IN (SELECT delivery_id FROM delivery_items))',
    'destination_id IN (SELECT id FROM destinations WHERE removed_at IS NULL)'];
  const args: unknown[] = [...f.statuses];
  if (!f.statuses.includes('delivered')) where.push(PROBLEMS.replaceAll('d.', ''));
  if (f.deliveryId !== undefined) { where.push('id = ?'); args.push(f.deliveryId); }
  if (f.scriptId !== undefined) { where.push('script_id = ?'); args.push(f.scriptId); }
  if (f.destinationId !== undefined) { where.push('destination_id = ?'); args.push(f.destinationId); }
  if (f.eventId !== undefined) { where.push(byEventId('event_seq')); args.push(f.eventId); }
  if (f.since !== undefined) { where.push('created_at >= ?'); args.push(f.since); }
  return { sql: where.join(' AND '), args };
}

/** Rows deleted per transaction by the purges. */
const PURGE_CHUNK = 5_000;

export function sqliteDeliveryQueries(db: Database.Database): Queries {
  const health = db.prepare<[string], HealthRow>('SELECT * FROM destination_health WHERE destination_id = ?');
  // The first attempt recorded for a delivery is in its row, the others are linked (migration 19).
  const attempts = db.prepare<[number, number], AttemptRow>(`SELECT a.* FROM delivery_attempts a WHERE a.id IN (
      SELECT attempt_id FROM delivery_attempt_items WHERE delivery_id = ? UNION SELECT attempt_id FROM deliveries WHERE id = ?) ORDER BY a.id`);

  // An event back in the dispatch queue for one more destination (merged into what it still owes, if queued: NULL owes all).
  const requeue = db.prepare(`INSERT INTO dispatch_queue (event_seq, held_for) VALUES (@seq, json_array(@destination))
    ON CONFLICT (event_seq) DO UPDATE SET map_claims = 0, held_for = CASE WHEN held_for IS NULL THEN NULL
      ELSE (SELECT json_group_array(value) FROM (SELECT value FROM json_each(dispatch_queue.held_for) UNION SELECT @destination)) END`);
  const dropRow = db.prepare('DELETE FROM deliveries WHERE id = ?');
  const dropItem = db.prepare('DELETE FROM delivery_items WHERE delivery_id = ?');
  // The queue's exceptions, and the accepted events after the fan-out cursor (migration 22) it does not hold.
  const backlogSql = db.prepare<[], { n: number }>(`SELECT (SELECT count(*) FROM dispatch_queue) + (SELECT count(*) FROM events e
      WHERE e.seq > (SELECT cursor_seq FROM fanout_cursors WHERE part = 0) AND e.status = 'accepted'
        AND NOT EXISTS (SELECT 1 FROM dispatch_queue q WHERE q.event_seq = e.seq)) AS n`);
  const backlog = (): number => backlogSql.get()!.n;
  const derived = sqliteDeliveredQueries(db);

  /** Deletes in chunks until a chunk comes back short; returns the total. */
  function chunked(stmt: Database.Statement, ...args: unknown[]): number {
    let total = 0;
    for (;;) {
      const n = db.transaction(() => stmt.run(...args, PURGE_CHUNK).changes).immediate();
      total += n;
      if (n < PURGE_CHUNK) return total;
    }
  }

  return {
    async list(f) {
      // Derived ids are above every row id: those first, then rows for the rest of the page.
      const limit = f.limit ?? 100;
      const first = derived.list(f, limit);
      if (first.length >= limit || (f.id !== undefined && f.id >= DERIVED_ID_BASE)) return first;
      const where: string[] = [];
      const args: unknown[] = [];
      if (f.id !== undefined) { where.push('d.id = ?'); args.push(f.id); }
      if (f.beforeId !== undefined && f.beforeId < DERIVED_ID_BASE) { where.push('d.id < ?'); args.push(f.beforeId); }
      if (f.eventRowId !== undefined) { where.push('d.event_seq = (SELECT seq FROM events WHERE id = ?)'); args.push(f.eventRowId); }
      // With an event id, its index leads: `+` keeps the planner off the account's whole index range.
      if (f.scriptId !== undefined) { where.push(f.eventId !== undefined ? '+d.script_id = ?' : 'd.script_id = ?'); args.push(f.scriptId); }
      if (f.status !== undefined) { where.push('d.status = ?'); args.push(f.status); }
      // Spelled out so the small partial index deliveries_problems serves these lists.
      if (f.status === 'dead' || f.status === 'failed') where.push(PROBLEMS);
      if (f.eventId !== undefined) { where.push(byEventId('d.event_seq')); args.push(f.eventId); }
      if (f.destinationId !== undefined) { where.push('d.destination_id = ?'); args.push(f.destinationId); }
      args.push(limit - first.length);
      const rows = db.prepare(`SELECT d.*, i.item, (h.paused_at IS NOT NULL) AS paused FROM deliveries d
        LEFT JOIN delivery_items i ON i.delivery_id = d.id
        LEFT JOIN destination_health h ON h.destination_id = d.destination_id
        ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY d.id DESC LIMIT ?`).all(...args) as ViewRow[];
      return [...first, ...rows.map(toDeliveryView)];
    },

    async attempts(deliveryId) {
      if (deliveryId >= DERIVED_ID_BASE) return derived.attempts(deliveryId);
      return attempts.all(deliveryId, deliveryId).map(toAttemptView);
    },

    async replay(f, now) {
      if (f.statuses.length === 0) return 0;
      const { sql, args } = replayable(f);
      const pick = (limit: number | undefined) => limit === undefined ? sql : `id IN (SELECT id FROM deliveries WHERE ${sql} ORDER BY id LIMIT ${Math.max(0, Math.floor(limit))})`;
      // A delivery failed as mapping_failed has no item: its event goes back to the fan-out for
      // its destination (poison-counted like any fan-out) and the row is made again there.
      const poisoned = db.prepare<unknown[], { id: number; event_seq: number; destination_id: string }>(
        `SELECT id, event_seq, destination_id FROM deliveries WHERE skip_reason = '${MAPPING_FAILED}' AND ${pick(f.limit)}`);
      const update = (limit: number | undefined) => db.prepare(`UPDATE deliveries SET status = 'pending', attempts = 0, next_attempt_at = ?,
        lease_owner = NULL, lease_until = NULL, delivered_at = NULL, updated_at = ? WHERE ${pick(limit)}`);
      return db.transaction(() => {
        const requeued = poisoned.all(...args);
        for (const r of requeued) {
          requeue.run({ seq: r.event_seq, destination: r.destination_id });
          dropRow.run(r.id);
          dropItem.run(r.id);
        }
        // The oldest `limit` matching rows were those requeued and the oldest limit - requeued of the rest;
        // then deliveries delivered without a row (ids above every row's), each given a row.
        const rows = requeued.length + update(f.limit === undefined ? undefined : f.limit - requeued.length).run(now, now, ...args).changes;
        return rows + derived.replay(f, now, f.limit === undefined ? undefined : f.limit - rows);
      }).immediate();
    },

    async countReplayable(f) {
      if (f.statuses.length === 0) return 0;
      const { sql, args } = replayable(f);
      return (db.prepare(`SELECT count(*) AS n FROM deliveries WHERE ${sql}`).get(...args) as { n: number }).n + derived.countReplayable(f);
    },

    async stats(scriptId) {
      const scope = scriptId === undefined ? '' : 'WHERE script_id = ?';
      const args = scriptId === undefined ? [] : [scriptId];
      const counts = db.prepare(`SELECT destination_id, status, count(*) AS n,
          min(CASE WHEN status = 'pending' THEN received_at END) AS oldest,
          min(CASE WHEN status = 'pending' THEN next_attempt_at END) AS next_due
        FROM deliveries ${scope} GROUP BY destination_id, status`).all(...args) as
        { destination_id: string; status: DeliveryStatus; n: number; oldest: number | null; next_due: number | null }[];
      const dests = db.prepare(`SELECT d.id, d.script_id, d.type, d.name, d.enabled, d.removed_at, h.*
        FROM destinations d LEFT JOIN destination_health h ON h.destination_id = d.id
        ${scriptId === undefined ? '' : 'WHERE d.script_id = ?'} ORDER BY d.script_id, d.created_at, d.id`).all(...args) as
        (HealthRow & { id: string; script_id: string; type: string; name: string; enabled: number; removed_at: number | null })[];
      return assembleStats(dests, [...counts, ...derived.counts(scriptId)]);
    },

    async health(destinationId) {
      const r = health.get(destinationId);
      return r ? toHealth(r) : null;
    },

    async dispatchBacklog() {
      return backlog();
    },

    async queueSnapshot(): Promise<QueueSnapshot> {
      const byType = db.prepare(`SELECT destination_type, count(*) AS pending, min(received_at) AS oldest
        FROM deliveries WHERE status = 'pending' GROUP BY destination_type`).all() as
        { destination_type: string; pending: number; oldest: number | null }[];
      const paused = db.prepare(`SELECT count(*) AS n FROM destination_health h JOIN destinations d ON d.id = h.destination_id
        WHERE h.paused_at IS NOT NULL AND d.removed_at IS NULL`).get() as { n: number };
      const byDestination = db.prepare(`SELECT p.*, d.enabled, h.paused_at FROM (
          SELECT destination_id, min(destination_type) AS destination_type, count(*) AS pending,
            min(received_at) AS oldest, min(next_attempt_at) AS next_due
          FROM deliveries WHERE status = 'pending' GROUP BY destination_id) p
        JOIN destinations d ON d.id = p.destination_id AND d.removed_at IS NULL
        LEFT JOIN destination_health h ON h.destination_id = p.destination_id
        ORDER BY p.destination_id`).all() as PendingByDestinationRow[];
      return {
        dispatchBacklog: backlog(),
        byType: byType.map((r) => ({ destinationType: r.destination_type, pending: r.pending, oldestPendingAt: r.oldest })),
        byDestination: byDestination.map(toPendingByDestination),
        pausedDestinations: paused.n,
      };
    },

    async purge(before) {
      // Ids grow with time, so "older than" is a prefix of the rowids: find where it ends
      // once, then delete inside that range (pending deliveries and the events they need stay).
      const edge = (table: string, column: string): number => {
        const r = db.prepare(`SELECT rowid AS id FROM ${table} WHERE ${column} >= ? ORDER BY rowid LIMIT 1`).get(before) as { id: number } | undefined;
        const max = db.prepare(`SELECT max(rowid) AS id FROM ${table}`).get() as { id: number | null };
        return r?.id ?? (max.id ?? 0) + 1;
      };
      const attemptEdge = edge('delivery_attempts', 'attempted_at');
      // The deliveries delivered without a row go with the attempts that list them.
      const listed = derived.purgedWith(attemptEdge);
      const attempts = chunked(db.prepare(`DELETE FROM delivery_attempts WHERE id IN
        (SELECT id FROM delivery_attempts WHERE id < ? LIMIT ?)`), attemptEdge);
      chunked(db.prepare(`DELETE FROM delivery_attempt_items WHERE (attempt_id, delivery_id) IN
        (SELECT attempt_id, delivery_id FROM delivery_attempt_items WHERE attempt_id < ? LIMIT ?)`), attemptEdge);
      const finished = `SELECT id FROM deliveries
        WHERE id < ? AND status <> 'pending' AND (updated_at < ? OR skip_reason IN ('expired', 'destination_removed')) LIMIT ?`;
      const deliveryEdge = edge('deliveries', 'created_at');
      // Their items first (a failed or dead one keeps its item for a replay).
      chunked(db.prepare(`DELETE FROM delivery_items WHERE delivery_id IN (SELECT delivery_id FROM delivery_items
        WHERE delivery_id IN (${finished.replace('LIMIT ?', '')}) LIMIT ?)`), deliveryEdge, before);
      const deliveries = chunked(db.prepare(`DELETE FROM deliveries WHERE id IN (${finished})`), deliveryEdge, before);
      // An event after the fan-out cursor is owed to its destinations, like a queued one. The
      // newest event stays too: SQLite gives a new row the highest seq + 1, and a seq at or
      // before the cursor would never be fanned out.
      const { cursor, last } = db.prepare(`SELECT (SELECT cursor_seq FROM fanout_cursors WHERE part = 0) AS cursor,
        (SELECT max(seq) FROM events) AS last`).get() as { cursor: number; last: number | null };
      const events = chunked(db.prepare(`DELETE FROM events WHERE seq IN (SELECT seq FROM events e WHERE seq < ?
        AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_seq = e.seq)
        AND NOT EXISTS (SELECT 1 FROM dispatch_queue q WHERE q.event_seq = e.seq) AND NOT ${LISTED_EVENT} LIMIT ?)`),
      Math.min(edge('events', 'received_at'), cursor + 1, last ?? 0));
      return { events, deliveries: deliveries + listed, attempts };
    },

    async purgeDedupKeys(before) {
      return chunked(db.prepare(`DELETE FROM dedup_keys WHERE (script_id, environment, name, event_id) IN
        (SELECT script_id, environment, name, event_id FROM dedup_keys WHERE first_seen_at < ? LIMIT ?)`), before);
    },
  };
}
