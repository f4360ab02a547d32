// PostgreSQL deliveries: the dispatch queue, claims with leases fenced by claim id, attempt
// records and destination health (the contract and its model: store/delivery-contract.ts and the
// SQLite twin). Claims take rows with FOR UPDATE SKIP LOCKED, so instances claiming at the
// same moment split the work instead of queueing behind each other; every later write is
// conditional on the row still carrying the claim id, so an instance whose lease lapsed and
// was taken over can neither complete nor renew it. Bookkeeping commits with
// synchronous_commit off: losing the latest of those commits in a database crash only
// repeats work (at-least-once), never loses an acknowledged event.
import type pg from 'pg';
import { toClaimed, truncateBytes, type ClaimRow } from '../delivery-rows.ts';
import type {
  ActiveDestination, AttemptRecord, DeliveryStore, DispatchEvent, FanOutCommit, RecordResult,
} from '../delivery-contract.ts';
import { MAX_RESPONSE_BYTES } from '../delivery-contract.ts';
import { tx } from './connection.ts';
import { toPgEvent, type PgEventRow } from './rows.ts';
import { WORK_CHANNEL } from './notify.ts';
import { pgDeliveryQueries } from './delivery-queries.ts';

interface DestinationRow {
  id: string; script_id: string; type: string; name: string; enabled: boolean; settings: string;
  created_at: number; updated_at: number; paused_at: number | null; paused_destination_updated_at: number | null;
}



const relaxed = { relaxed: true };

export function pgDeliveryStore(pool: pg.Pool): DeliveryStore {
  return {
    async claimEvents(claimId, now, leaseMs, limit) {
      return tx(pool, async (c) => {
        const { rows } = await c.query<PgEventRow>(`WITH due AS (
            SELECT event_seq FROM dispatch_queue WHERE lease_until IS NULL OR lease_until <= $3 OR lease_owner = $1
            ORDER BY event_seq LIMIT $4 FOR UPDATE SKIP LOCKED),
          leased AS (UPDATE dispatch_queue q SET lease_owner = $1, lease_until = $2 FROM due WHERE q.event_seq = due.event_seq RETURNING q.event_seq, q.held_for)
          SELECT e.*, l.held_for AS queued_held_for FROM leased l JOIN events e ON e.seq = l.event_seq ORDER BY e.seq`, [claimId, now + leaseMs, now, limit]);
        // Queue rows whose event was purged: nothing left to deliver.
        await c.query(`DELETE FROM dispatch_queue q WHERE q.lease_owner = $1 AND NOT EXISTS (SELECT 1 FROM events e WHERE e.seq = q.event_seq)`, [claimId]);
        return rows.map((r): DispatchEvent => {
          const held = (r as PgEventRow & { queued_held_for: string | null }).queued_held_for;
          return held === null ? { seq: r.seq, event: toPgEvent(r) } : { seq: r.seq, event: toPgEvent(r), heldFor: JSON.parse(held) as string[] };
        });
      }, relaxed);
    },

    async completeFanOut(claimId, now, results) {
      return tx(pool, async (c) => {
        const seqs = results.filter((r) => r.held === undefined).map((r) => r.seq);
        const { rows: unqueued } = await c.query<{ event_seq: number }>(
          'DELETE FROM dispatch_queue WHERE event_seq = ANY($1::bigint[]) AND lease_owner = $2 RETURNING event_seq', [seqs, claimId]);
        const ours = new Set(unqueued.map((h) => h.event_seq)); // the others' lease was lost: the new holder fans them out
        // Events held for some destinations stay queued for those, leased to the hold's claim.
        const holds = new Map<string, { claimId: string; leaseUntil: number; seqs: number[]; owed: string[] }>();
        for (const r of results) {
          if (r.held === undefined) continue;
          const k = `${r.held.claimId}\0${r.held.leaseUntil}`;
          let g = holds.get(k);
          if (g === undefined) holds.set(k, (g = { claimId: r.held.claimId, leaseUntil: r.held.leaseUntil, seqs: [], owed: [] }));
          g.seqs.push(r.seq);
          g.owed.push(JSON.stringify(r.held.destinationIds));
        }
        for (const g of holds.values()) {
          const { rows: kept } = await c.query<{ event_seq: number }>(`UPDATE dispatch_queue q SET held_for = x.owed, lease_owner = $3, lease_until = $4
            FROM unnest($1::bigint[], $2::text[]) AS x(seq, owed) WHERE q.event_seq = x.seq AND q.lease_owner = $5 RETURNING q.event_seq`,
          [g.seqs, g.owed, g.claimId, g.leaseUntil, claimId]);
          for (const k of kept) ours.add(k.event_seq);
        }
        const cols: unknown[][] = Array.from({ length: 14 }, () => []);
        const pendingByDestination = new Map<string, number>();
        const leased: FanOutCommit['leased'] = [];
        const rows: unknown[][] = [];
        for (const r of results) {
          if (!ours.has(r.seq)) continue;
          r.deliveries.forEach((d, index) => {
            const lease = d.status === 'pending' ? d.lease : undefined;
            rows.push([r.seq, r.scriptId, d.destinationId, d.destinationType, r.eventId, d.item === null ? null : JSON.stringify(d.item),
              d.status, d.reason ?? null, d.status !== 'pending' ? null : lease?.leaseUntil ?? now, d.message ?? null, r.receivedAt,
              lease?.claimId ?? null, lease?.leaseUntil ?? null]);
            if (lease) leased.push({ seq: r.seq, index, id: 0 });
            else if (d.status === 'pending') pendingByDestination.set(d.destinationId, (pendingByDestination.get(d.destinationId) ?? 0) + 1);
          });
        }
        if (rows.length > 0) {
          // With rows handed to a lane, ids are drawn first so theirs are known without relying
          // on RETURNING's order; otherwise the column default draws them in the insert.
          const ids = leased.length === 0 ? null : (await c.query<{ id: number }>(
            "SELECT nextval(pg_get_serial_sequence('deliveries', 'id')) AS id FROM generate_series(1, $1)", [rows.length])).rows;
          rows.forEach((row, i) => {
            cols[0].push(ids?.[i].id ?? null);
            row.forEach((v, k) => cols[k + 1].push(v));
          });
          // leased follows the rows' order: the n-th leased row is the n-th row with a claim.
          let l = 0;
          if (ids !== null) rows.forEach((row, i) => { if (row[11] !== null) leased[l++].id = ids[i].id; });
          await c.query(`INSERT INTO deliveries (id, event_seq, script_id, destination_id, destination_type, event_id, item, status,
              skip_reason, attempts, next_attempt_at, last_error, received_at, lease_owner, lease_until, created_at, updated_at)
            SELECT coalesce(id, nextval(pg_get_serial_sequence('deliveries', 'id'))), s, a, d, t, e, i, st, r, 0, n, m, rc, lo, lu, $15, $15
            FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
              $10::bigint[], $11::text[], $12::bigint[], $13::text[], $14::bigint[])
              AS u(id, s, a, d, t, e, i, st, r, n, m, rc, lo, lu)`,
          [...cols, now]);
        }
        if (pendingByDestination.size > 0) await c.query(`NOTIFY ${WORK_CHANNEL}`);
        return { events: ours.size, pendingByDestination, leased };
      }, relaxed);
    },

    async claimDeliveries(destinationId, claimId, now, leaseUntil, limit) {
      // In a relaxed transaction: a claim is bookkeeping, and an fsync per claim was the
      // largest wait PostgreSQL showed under load.
      const rows = await tx(pool, async (c) => (await c.query<ClaimRow>({ name: 'tl_claim_deliveries', text: `WITH due AS (
          SELECT id FROM deliveries WHERE destination_id = $1 AND status = 'pending' AND next_attempt_at <= $2
          ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED),
        leased AS (UPDATE deliveries d SET lease_owner = $4, lease_until = $5, next_attempt_at = $5 FROM due WHERE d.id = due.id
          RETURNING d.id, d.event_seq, d.script_id, d.destination_id, d.destination_type, d.event_id, d.attempts, d.received_at, d.item)
        SELECT l.*, e.payload FROM leased l LEFT JOIN events e ON e.seq = l.event_seq ORDER BY l.id`,
      values: [destinationId, now, limit, claimId, leaseUntil] })).rows, relaxed);
      return toClaimed(rows);
    },

    async nextDue(destinationId) {
      const { rows } = await pool.query<{ t: number | null }>(
        "SELECT min(next_attempt_at) AS t FROM deliveries WHERE destination_id = $1 AND status = 'pending'", [destinationId]);
      return rows[0]?.t ?? null;
    },

    async recordAttempts(records) {
      if (records.length === 0) return [];
      return tx(pool, async (c) => {
        const results: RecordResult[] = [];
        for (const rec of records) {
          const { http } = rec;
          if (http !== null) {
            // The attempt and its items in one statement.
            await c.query({ name: 'tl_record_attempt', text: `WITH a AS (INSERT INTO delivery_attempts (destination_id, attempted_at, status_code,
                latency_ms, response_body, error_class, outcome, message, events, request) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $11) RETURNING id)
              INSERT INTO delivery_attempt_items (attempt_id, delivery_id) SELECT a.id, u.id FROM a, unnest($10::bigint[]) AS u(id) ON CONFLICT DO NOTHING`,
            values: [rec.destinationId, rec.at, http.statusCode, Math.round(http.latencyMs), truncateBytes(http.responseBody, MAX_RESPONSE_BYTES),
              http.errorClass, http.outcome, rec.message, rec.updates.length, rec.updates.map((u) => u.id),
              http.request === undefined ? null : JSON.stringify(http.request)] });
          }
          let applied: number[] = [];
          if (rec.updates.length > 0) {
            const u = rec.updates;
            const { rows } = await c.query<{ id: number }>({ name: 'tl_record_updates', text: `UPDATE deliveries d SET status = v.status, attempts = v.attempts, next_attempt_at = v.next,
                lease_owner = NULL, lease_until = NULL,
                last_status_code = CASE WHEN $4 THEN $5::int ELSE d.last_status_code END,
                last_error = CASE WHEN v.status = 'delivered' THEN NULL ELSE $6 END,
                updated_at = $7, delivered_at = CASE WHEN v.status = 'delivered' THEN $7 ELSE d.delivered_at END
              FROM unnest($1::bigint[], $2::text[], $3::int[], $9::bigint[]) AS v(id, status, attempts, next)
              WHERE d.id = v.id AND d.lease_owner = $8 RETURNING d.id`,
            values: [u.map((x) => x.id), u.map((x) => x.status), u.map((x) => x.attempts), http !== null, http?.statusCode ?? null, rec.message,
              rec.at, rec.claimId, u.map((x) => x.nextAttemptAt)] });
            const done = new Set(rows.map((r) => r.id));
            applied = u.map((x) => x.id).filter((id) => done.has(id));
          }
          if (http !== null) {
            if (http.outcome === 'success') {
              await c.query(`INSERT INTO destination_health (destination_id, last_success_at) VALUES ($1, $2)
                ON CONFLICT (destination_id) DO UPDATE SET last_success_at = excluded.last_success_at, failing_since = NULL`, [rec.destinationId, rec.at]);
            } else {
              await c.query(`INSERT INTO destination_health (destination_id, last_failure_at, failing_since) VALUES ($1, $2, $2)
                ON CONFLICT (destination_id) DO UPDATE SET last_failure_at = excluded.last_failure_at,
                  failing_since = COALESCE(destination_health.failing_since, excluded.failing_since)`, [rec.destinationId, rec.at]);
              let reason: string | null = null;
              let since = rec.at;
              if (rec.pauseNow !== undefined) reason = rec.pauseNow;
              else if (rec.pauseAfterMs > 0) {
                const hours = Math.round((rec.pauseAfterMs / 3_600_000) * 100) / 100;
                reason = `failing with no success for ${hours} h; last error: ${rec.message}`.slice(0, 500);
                since = rec.at - rec.pauseAfterMs;
              }
              if (reason !== null) {
                await c.query(`UPDATE destination_health SET paused_at = $1, pause_reason = $2,
                    paused_destination_updated_at = (SELECT updated_at FROM destinations WHERE id = $3)
                  WHERE destination_id = $3 AND paused_at IS NULL AND failing_since IS NOT NULL AND failing_since <= $4`,
                [rec.at, reason, rec.destinationId, since]);
              }
            }
          }
          results.push({ applied, paused: false });
        }
        // Whether each destination is paused, as the transaction leaves it: one query for all.
        const ids = [...new Set(records.map((r) => r.destinationId))];
        const { rows: h } = await c.query<{ destination_id: string }>(
          'SELECT destination_id FROM destination_health WHERE destination_id = ANY($1::text[]) AND paused_at IS NOT NULL', [ids]);
        const paused = new Set(h.map((r) => r.destination_id));
        records.forEach((rec, i) => (results[i].paused = paused.has(rec.destinationId)));
        return results;
      }, relaxed);
    },

    async release(claimId, now, ids) {
      if (ids.length === 0) return 0;
      const r = await tx(pool, (c) => c.query(`UPDATE deliveries SET lease_owner = NULL, lease_until = NULL, next_attempt_at = $1
        WHERE id = ANY($2::bigint[]) AND lease_owner = $3 AND status = 'pending'`, [now, [...ids], claimId]), relaxed);
      return r.rowCount ?? 0;
    },

    async releaseOwner(owner, now) {
      // Claim ids are `${owner}#…`: everything between `owner#` and `owner$` ('$' follows '#').
      const lo = `${owner}#`;
      const hi = `${owner}$`;
      return tx(pool, async (c) => {
        const d = await c.query(`UPDATE deliveries SET lease_owner = NULL, lease_until = NULL, next_attempt_at = $1
          WHERE status = 'pending' AND lease_owner >= $2 AND lease_owner < $3`, [now, lo, hi]);
        const e = await c.query('UPDATE dispatch_queue SET lease_owner = NULL, lease_until = NULL WHERE lease_owner >= $1 AND lease_owner < $2', [lo, hi]);
        if ((d.rowCount ?? 0) + (e.rowCount ?? 0) > 0) await c.query(`NOTIFY ${WORK_CHANNEL}`);
        return (d.rowCount ?? 0) + (e.rowCount ?? 0);
      });
    },

    async leaseHolders() {
      const { rows } = await pool.query<{ owner: string }>(`SELECT DISTINCT lease_owner AS owner FROM deliveries
        WHERE status = 'pending' AND lease_owner IS NOT NULL
        UNION SELECT DISTINCT lease_owner FROM dispatch_queue WHERE lease_owner IS NOT NULL`);
      return rows.map((r) => r.owner);
    },

    async recoverExpiredLeases(now) {
      return tx(pool, async (c) => {
        const d = await c.query(`UPDATE deliveries SET lease_owner = NULL, lease_until = NULL
          WHERE status = 'pending' AND lease_until IS NOT NULL AND lease_until <= $1`, [now]);
        const e = await c.query('UPDATE dispatch_queue SET lease_owner = NULL, lease_until = NULL WHERE lease_until <= $1', [now]);
        return (d.rowCount ?? 0) + (e.rowCount ?? 0);
      });
    },

    async activeDestinations(): Promise<ActiveDestination[]> {
      const { rows } = await pool.query<DestinationRow>(`SELECT d.id, d.script_id, d.type, d.name, d.enabled, d.settings, d.created_at,
          d.updated_at, h.paused_at, h.paused_destination_updated_at FROM destinations d LEFT JOIN destination_health h ON h.destination_id = d.id
        WHERE d.removed_at IS NULL ORDER BY d.created_at, d.id`);
      return rows.map((r) => ({
        id: r.id, scriptId: r.script_id, type: r.type, name: r.name, enabled: r.enabled,
        settings: JSON.parse(r.settings) as Record<string, unknown>, createdAt: r.created_at, updatedAt: r.updated_at,
        pausedAt: r.paused_at, pausedDestinationUpdatedAt: r.paused_destination_updated_at,
      }));
    },

    async resume(destinationId, now) {
      return tx(pool, async (c) => {
        const un = await c.query(`UPDATE destination_health SET paused_at = NULL, pause_reason = NULL, failing_since = NULL,
            paused_destination_updated_at = NULL WHERE destination_id = $1 AND paused_at IS NOT NULL`, [destinationId]);
        await c.query('UPDATE destination_health SET failing_since = NULL WHERE destination_id = $1', [destinationId]);
        const due = await c.query(`UPDATE deliveries SET next_attempt_at = LEAST(next_attempt_at, $1)
          WHERE destination_id = $2 AND status = 'pending' AND lease_owner IS NULL`, [now, destinationId]);
        if ((due.rowCount ?? 0) > 0) await c.query(`NOTIFY ${WORK_CHANNEL}`);
        return { wasPaused: (un.rowCount ?? 0) > 0, due: due.rowCount ?? 0 };
      });
    },

    ...pgDeliveryQueries(pool),
  };
}
