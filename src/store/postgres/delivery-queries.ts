// PostgreSQL deliveries, the operator side and upkeep: listing, attempts, replay, stats,
// the queue snapshot, retention purges (chunked), retry-now and stranded-work expiry. The
// rows and the deliveries delivered without one (delivered-pairs.ts) are shown as one.
// Same results as the SQLite twin, so the store contract tests run against both.
import type pg from 'pg';
import {
  assembleStats, toAttemptView, toDeliveryView, toHealth, toPendingByDestination, type AttemptRow, type HealthRow,
  type PendingByDestinationRow, type ViewRow,
} from '../delivery-rows.ts';
import type {
  DeliveryStatus, DeliveryStore, QueueSnapshot, ReplayFilter,
} from '../delivery-contract.ts';
import { EXPIRED_MESSAGE, MAPPING_FAILED, REMOVED_MESSAGE } from '../delivery-contract.ts';
import { DERIVED_ID_BASE, decodeDeliveryId } from '../delivery-views.ts';
import { tx } from './connection.ts';
import {
  countReplayablePairs, derivedAttempts, derivedCounts, listDerived, listedByAttempt, purgeAttemptChunk, replayPairs,
} from './delivered-pairs.ts';
import { WORK_CHANNEL } from './notify.ts';
import { FAN_EVENTS, fanPart } from './fan-out-cursor.ts';

type Queries = Pick<DeliveryStore,
  'list' | 'attempts' | 'replay' | 'countReplayable' | 'stats' | 'health' | 'dispatchBacklog' | 'queueSnapshot' | 'purge' | 'purgeDedupKeys' | 'retryNow' | 'expireStranded'>;


const PURGE_CHUNK = 5_000;

/** Builds `WHERE a = $1 AND …` from optional filters. */
function where(filters: [string, unknown][], args: unknown[]): string {
  const parts: string[] = [];
  for (const [column, value] of filters) {
    if (value === undefined) continue;
    args.push(value);
    parts.push(`${column} = $${args.length}`);
  }
  return parts.join(' AND ');
}

/** Deliveries of the events with a customer event id ($n), through events_event_id and deliveries_event_part (migration 12). */
const byEventId = (seqColumn: string, n: number) => `${seqColumn} IN (SELECT seq FROM events WHERE event_id = $${n})`;

/** The deliveries a replay filter matches (limit aside), its values appended to `args`. */
function replayable(f: ReplayFilter, args: unknown[]): string {
  args.push([...f.statuses]);
  const parts = [`status = ANY($${args.length}::text[])`, '(part IS NOT NULL OR id IN (SELECT delivery_id FROM delivery_items))', 'destination_id IN (SELECT id FROM destinations WHERE removed_at IS NULL)'];
  const extra = where([['id', f.deliveryId], ['script_id', f.scriptId], ['destination_id', f.destinationId]], args);
  if (extra) parts.push(extra);
  if (f.eventId !== undefined) {
    args.push(f.eventId);
    parts.push(byEventId('event_seq', args.length));
  }
  if (f.since !== undefined) {
    args.push(f.since);
    parts.push(`created_at >= $${args.length}`);
  }
  return parts.join(' AND ');
}

/** `backlog`: the dispatch backlog, from the fan-out (dispatch-queue.ts), which knows what its partitions hold open. */
export function pgDeliveryQueries(pool: pg.Pool, backlog: () => Promise<number>): Queries {
  /** Deletes in chunks (each its own transaction) until a chunk comes back short. */
  async function chunked(sql: string, args: unknown[]): Promise<number> {
    let total = 0;
    for (;;) {
      const r = await pool.query(sql, [...args, PURGE_CHUNK]);
      const n = r.rowCount ?? 0;
      total += n;
      if (n < PURGE_CHUNK) return total;
    }
  }

  return {
    async list(f) {
      // Derived ids are above every row id: newest first, they come before the rows.
      const limit = f.limit ?? 100;
      const derived = await listDerived(pool, f, limit);
      if (derived.length >= limit || (f.id !== undefined && decodeDeliveryId(f.id) !== null)) return derived;
      const args: unknown[] = [];
      let cond = where([['d.id', f.id], ['d.script_id', f.scriptId], ['d.status', f.status], ['d.destination_id', f.destinationId]], args);
      if (f.eventId !== undefined) {
        args.push(f.eventId);
        cond = `${cond ? `${cond} AND ` : ''}${byEventId('d.event_seq', args.length)}`;
      }
      if (f.beforeId !== undefined && f.beforeId < DERIVED_ID_BASE) {
        args.push(f.beforeId);
        cond = `${cond ? `${cond} AND ` : ''}d.id < $${args.length}`;
      }
      if (f.eventRowId !== undefined) {
        args.push(f.eventRowId);
        cond = `${cond ? `${cond} AND ` : ''}d.event_seq = (SELECT seq FROM events WHERE id = $${args.length})`;
      }
      args.push(limit - derived.length);
      const { rows } = await pool.query<ViewRow>(`SELECT d.*, i.item, (h.paused_at IS NOT NULL) AS paused FROM deliveries d
        LEFT JOIN delivery_items i ON i.delivery_id = d.id
        LEFT JOIN destination_health h ON h.destination_id = d.destination_id
        ${cond ? `WHERE ${cond}` : ''} ORDER BY d.id DESC LIMIT $${args.length}`, args);
      return [...derived, ...rows.map(toDeliveryView)];
    },

    async attempts(deliveryId) {
      const derived = await derivedAttempts(pool, deliveryId);
      if (derived !== null) return derived;
      // The first attempt recorded for it is in its row, the others are linked (migration 12).
      const { rows } = await pool.query<AttemptRow>(`SELECT a.* FROM delivery_attempts a WHERE a.id IN (
          SELECT attempt_id FROM delivery_attempt_items WHERE delivery_id = $1 UNION SELECT attempt_id FROM deliveries WHERE id = $1)
        ORDER BY a.id`, [deliveryId]);
      return rows.map(toAttemptView);
    },

    async replay(f, now) {
      if (f.statuses.length === 0) return 0;
      const args: unknown[] = [now];
      const matching = replayable(f, args);
      const pick = f.limit === undefined ? matching : `id IN (SELECT id FROM deliveries WHERE ${matching} ORDER BY id LIMIT ${Math.max(0, Math.floor(f.limit))})`;
      // A delivery failed as mapping_failed has no item: it is removed and its event goes back to
      // the fan-out for its destination (merged into what a queued event still owes; NULL owes all).
      return tx(pool, async (c) => {
        const { rows } = await c.query<{ n: number }>(`WITH picked AS (SELECT id, event_seq, destination_id, skip_reason FROM deliveries WHERE ${pick} FOR UPDATE),
          requeued AS (DELETE FROM deliveries d USING picked p WHERE d.id = p.id AND p.skip_reason = '${MAPPING_FAILED}' RETURNING d.id, d.event_seq, d.destination_id),
          items AS (DELETE FROM delivery_items WHERE delivery_id IN (SELECT id FROM requeued)),
          queued AS (INSERT INTO dispatch_queue (event_seq, held_for)
            SELECT event_seq, json_agg(destination_id)::text FROM requeued GROUP BY event_seq
            ON CONFLICT (event_seq) DO UPDATE SET map_claims = 0, held_for = CASE WHEN dispatch_queue.held_for IS NULL THEN NULL
              ELSE (SELECT json_agg(DISTINCT v)::text FROM (SELECT jsonb_array_elements_text(dispatch_queue.held_for::jsonb) AS v
                UNION SELECT jsonb_array_elements_text(excluded.held_for::jsonb)) AS owed) END),
          updated AS (UPDATE deliveries d SET status = 'pending', attempts = 0, next_attempt_at = $1, lease_owner = NULL,
              lease_until = NULL, delivered_at = NULL, updated_at = $1
            FROM picked p WHERE d.id = p.id AND p.skip_reason IS DISTINCT FROM '${MAPPING_FAILED}' RETURNING 1)
          SELECT (SELECT count(*) FROM requeued)::int + (SELECT count(*) FROM updated)::int AS n`, args);
        // Then the derived ones (delivered without a row): one limit across both, rows first (lower ids).
        const n = rows[0].n + await replayPairs(c, f, now, f.limit === undefined ? null : Math.max(0, Math.floor(f.limit) - rows[0].n));
        if (n > 0) await c.query(`NOTIFY ${WORK_CHANNEL}, 'deliveries'`);
        return n;
      });
    },

    async countReplayable(f) {
      if (f.statuses.length === 0) return 0;
      const args: unknown[] = [];
      const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM deliveries WHERE ${replayable(f, args)}`, args);
      return rows[0].n + await countReplayablePairs(pool, f);
    },

    async stats(scriptId) {
      const args = scriptId === undefined ? [] : [scriptId];
      const { rows: counts } = await pool.query<{ destination_id: string; status: DeliveryStatus; n: number; oldest: number | null; next_due: number | null }>(
        `SELECT destination_id, status, sum(n)::int AS n, min(oldest) AS oldest, min(next_due) AS next_due FROM (
           SELECT destination_id, status, count(*)::int AS n, min(CASE WHEN status = 'pending' THEN received_at END) AS oldest,
             min(CASE WHEN status = 'pending' THEN next_attempt_at END) AS next_due
           FROM deliveries ${scriptId === undefined ? '' : 'WHERE script_id = $1'} GROUP BY destination_id, status
           UNION ALL ${derivedCounts(scriptId !== undefined)}) c GROUP BY destination_id, status`, args);
      const { rows: dests } = await pool.query<HealthRow & { id: string; script_id: string; type: string; name: string; enabled: boolean; removed_at: number | null }>(
        `SELECT d.id, d.script_id, d.type, d.name, d.enabled, d.removed_at, h.destination_id, h.last_success_at, h.last_failure_at,
           h.failing_since, h.paused_at, h.pause_reason
         FROM destinations d LEFT JOIN destination_health h ON h.destination_id = d.id
         ${scriptId === undefined ? '' : 'WHERE d.script_id = $1'} ORDER BY d.script_id, d.created_at, d.id`, args);
      return assembleStats(dests, counts);
    },

    async health(destinationId) {
      const { rows } = await pool.query<HealthRow>('SELECT * FROM destination_health WHERE destination_id = $1', [destinationId]);
      return rows[0] ? toHealth(rows[0]) : null;
    },

    dispatchBacklog: backlog,

    async queueSnapshot(): Promise<QueueSnapshot> {
      const { rows: byType } = await pool.query<{ destination_type: string; pending: number; oldest: number | null }>(
        `SELECT destination_type, count(*)::int AS pending, min(received_at) AS oldest
         FROM deliveries WHERE status = 'pending' GROUP BY destination_type ORDER BY destination_type`);
      const { rows: [paused] } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM destination_health h
        JOIN destinations d ON d.id = h.destination_id WHERE h.paused_at IS NOT NULL AND d.removed_at IS NULL`);
      const { rows: byDestination } = await pool.query<PendingByDestinationRow>(`SELECT p.*, d.enabled, h.paused_at FROM (
          SELECT destination_id, min(destination_type) AS destination_type, count(*)::int AS pending,
            min(received_at) AS oldest, min(next_attempt_at) AS next_due
          FROM deliveries WHERE status = 'pending' GROUP BY destination_id) p
        JOIN destinations d ON d.id = p.destination_id AND d.removed_at IS NULL
        LEFT JOIN destination_health h ON h.destination_id = p.destination_id
        ORDER BY p.destination_id`);
      return {
        dispatchBacklog: await backlog(),
        byType: byType.map((r) => ({ destinationType: r.destination_type, pending: r.pending, oldestPendingAt: r.oldest })),
        byDestination: byDestination.map(toPendingByDestination),
        pausedDestinations: paused.n,
      };
    },

    async purge(before) {
      // Pending deliveries, and the events they, the dispatch queue or the fan-out (after its cursor) still need, stay.
      const { rows: old } = await pool.query<{ id: number | null }>('SELECT max(id) AS id FROM delivery_attempts WHERE attempted_at < $1', [before]);
      const attemptEdge = (old[0].id ?? 0) + 1;
      // With the attempts, the deliveries they list as delivered without a row.
      let attempts = 0;
      let listed = 0;
      for (;;) {
        const gone = await purgeAttemptChunk(pool, attemptEdge, PURGE_CHUNK);
        attempts += gone.attempts;
        listed += gone.deliveries;
        if (gone.attempts < PURGE_CHUNK) break;
      }
      await chunked(`DELETE FROM delivery_attempt_items WHERE (attempt_id, delivery_id) IN
        (SELECT attempt_id, delivery_id FROM delivery_attempt_items WHERE attempt_id < $1 LIMIT $2)`, [attemptEdge]);
      // Their items with them, in the same statement (a failed or dead one kept its item for a replay).
      const deliveries = await chunked(`WITH gone AS (DELETE FROM deliveries WHERE id IN (SELECT id FROM deliveries
          WHERE created_at < $1 AND status <> 'pending' AND (updated_at < $1 OR skip_reason IN ('expired', 'destination_removed')) LIMIT $2)
          RETURNING id),
        items AS (DELETE FROM delivery_items WHERE delivery_id IN (SELECT id FROM gone))
        SELECT id FROM gone`, [before]);
      const events = await chunked(`DELETE FROM events WHERE seq IN (SELECT seq FROM events e WHERE received_at < $1
        AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_seq = e.seq)
        AND NOT EXISTS (SELECT 1 FROM dispatch_queue q WHERE q.event_seq = e.seq) AND NOT ${listedByAttempt}
        AND NOT (${FAN_EVENTS('e')} AND (e.fan_xid, e.seq) > (SELECT c.cursor_xid, c.cursor_seq FROM fanout_cursors c WHERE c.part = ${fanPart('e')}))
        LIMIT $2)`, [before]);
      return { events, deliveries: deliveries + listed, attempts };
    },

    async purgeDedupKeys(before) {
      return chunked(`DELETE FROM dedup_keys WHERE (script_id, environment, name, event_id) IN
        (SELECT script_id, environment, name, event_id FROM dedup_keys WHERE first_seen_at < $1 LIMIT $2)`, [before]);
    },

    async retryNow(f, now) {
      const args: unknown[] = [now];
      const extra = where([['script_id', f.scriptId], ['destination_id', f.destinationId]], args);
      return tx(pool, async (c) => {
        const r = await c.query(`UPDATE deliveries SET next_attempt_at = $1, updated_at = $1
          WHERE status = 'pending' AND next_attempt_at > $1 AND lease_owner IS NULL${extra ? ` AND ${extra}` : ''}`, args);
        if ((r.rowCount ?? 0) > 0) await c.query(`NOTIFY ${WORK_CHANNEL}, 'deliveries'`);
        return r.rowCount ?? 0;
      });
    },

    async expireStranded(now, before) {
      return tx(pool, async (c) => {
        const removed = await c.query(`UPDATE deliveries SET status = 'skipped', skip_reason = 'destination_removed',
            last_error = $2, next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL, updated_at = $1
          WHERE status = 'pending' AND (lease_until IS NULL OR lease_until <= $1)
            AND destination_id IN (SELECT id FROM destinations WHERE removed_at IS NOT NULL)`, [now, REMOVED_MESSAGE]);
        const expired = await c.query(`UPDATE deliveries SET status = 'skipped', skip_reason = 'expired',
            last_error = $3, next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL, updated_at = $1
          WHERE status = 'pending' AND created_at < $2 AND (lease_until IS NULL OR lease_until <= $1)
            AND destination_id IN (SELECT d.id FROM destinations d LEFT JOIN destination_health h ON h.destination_id = d.id
              WHERE d.removed_at IS NULL AND (NOT d.enabled OR h.paused_at IS NOT NULL))`, [now, before, EXPIRED_MESSAGE]);
        return { removed: removed.rowCount ?? 0, expired: expired.rowCount ?? 0 };
      });
    },
  };
}
