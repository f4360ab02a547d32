// PostgreSQL deliveries: claims with leases fenced by claim id, attempt records and destination
// health (the dispatch queue's side: dispatch-queue.ts and its fan-out-*.ts; the contract and its model: store/delivery-contract.ts and the
// SQLite twin). Claims take rows with FOR UPDATE SKIP LOCKED, so instances claiming at the
// same moment split the work instead of queueing behind each other; every later write is
// conditional on the row still carrying the claim id, so an instance whose lease lapsed and
// was taken over can neither complete nor renew it. Bookkeeping commits with
// synchronous_commit off: losing the latest of those commits in a database crash only
// repeats work (at-least-once), never loses an acknowledged event.
import type pg from 'pg';
import { toClaimed, type ClaimRow } from '../delivery-rows.ts';
import type { ActiveDestination, DeliveryStore, UnstoredRow } from '../delivery-contract.ts';
import { partKey } from '../delivery-contract.ts';
import { tx } from './connection.ts';
import { WORK_CHANNEL } from './notify.ts';
import { pgDeliveryQueries } from './delivery-queries.ts';
import { pgDispatchQueue } from './dispatch-queue.ts';
import { listedPair, listingLocks } from './delivered-pairs.ts';
import { mayList, recordAttemptsOn } from './record-attempts.ts';

interface DestinationRow {
  id: string; script_id: string; type: string; name: string; enabled: boolean; settings: string;
  created_at: number; updated_at: number; paused_at: number | null; paused_destination_updated_at: number | null;
}

const relaxed = { relaxed: true };

/** The columns of handed-off rows, for inserts from unnest: seq, script, destination, type, event id, part, received. */
function unstoredColumns(rows: readonly UnstoredRow[]): unknown[][] {
  return [rows.map((r) => r.eventSeq), rows.map((r) => r.scriptId), rows.map((r) => r.destinationId), rows.map((r) => r.destinationType),
    rows.map((r) => r.eventId), rows.map((r) => r.part), rows.map((r) => r.receivedAt)];
}

export function pgDeliveryStore(pool: pg.Pool): DeliveryStore {
  const fanOut = pgDispatchQueue(pool);
  const { releaseCursors, recoverCursors, cursorHolders, backlog, ...fanOutMethods } = fanOut;
  return {
    async claimDeliveries(destinationId, claimId, now, leaseUntil, limit, opts = {}) {
      // In a relaxed transaction: a claim is bookkeeping, and an fsync per claim was the
      // largest wait PostgreSQL showed under load. Its generic plan is the custom one's shape
      // (index scans by destination and due time, joins by key), and planning it took ~1–2 ms a claim. Due retries first (index deliveries_retry_due),
      // then first attempts up to the limit ($6: none, retries only).
      const rows = await tx(pool, async (c) => (await c.query<ClaimRow>({ name: 'tl_claim_deliveries', text: `WITH retries AS (
          SELECT id FROM deliveries WHERE destination_id = $1 AND status = 'pending' AND attempts > 0 AND next_attempt_at <= $2
          ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED),
        firsts AS (
          SELECT id FROM deliveries WHERE destination_id = $1 AND status = 'pending' AND attempts = 0 AND next_attempt_at <= $2
          ORDER BY next_attempt_at LIMIT CASE WHEN $6::boolean THEN 0 ELSE $3 - (SELECT count(*) FROM retries) END FOR UPDATE SKIP LOCKED),
        due AS (SELECT id FROM retries UNION ALL SELECT id FROM firsts),
        leased AS (UPDATE deliveries d SET lease_owner = $4, lease_until = $5, next_attempt_at = $5 FROM due WHERE d.id = due.id
          RETURNING d.id, d.event_seq, d.script_id, d.destination_id, d.destination_type, d.event_id, d.attempts, d.received_at, d.part)
        SELECT l.*, i.item, e.payload, e.payload_packed, e.id AS event_uuid FROM leased l LEFT JOIN events e ON e.seq = l.event_seq
          LEFT JOIN delivery_items i ON i.delivery_id = l.id ORDER BY l.attempts = 0, l.id`,
      values: [destinationId, now, limit, claimId, leaseUntil, opts.retriesOnly === true] })).rows, { relaxed: true, generic: true });
      return toClaimed(rows);
    },

    async nextDue(destinationId) {
      // Named: planned once per connection (weighing deliveries' partial indexes cost more than running it).
      const { rows } = await pool.query<{ t: number | null }>({ name: 'tl_next_due',
        text: "SELECT min(next_attempt_at) AS t FROM deliveries WHERE destination_id = $1 AND status = 'pending'", values: [destinationId] });
      return rows[0]?.t ?? null;
    },

    async recordAttempts(records) {
      // Its plan is the same for every batch: planned once per connection, not for its first five (a few ms each).
      if (records.length === 0) return [];
      const listing = records.filter(mayList).map((r) => r.destinationId);
      return tx(pool, (c) => recordAttemptsOn(c, records), { relaxed: true, generic: true, ...(listing.length === 0 ? {} : { first: listingLocks(listing, 'shared') }) });
    },

    async storeHandoffs(rows, now, lease) {
      if (rows.length === 0) return [];
      return tx(pool, async (c) => {
        // Handed back: due now; still in its lane: leased to its claim (due when the lease ends).
        // Each row inserted gets its item in delivery_items (the first row of a key, were one repeated).
        // One an attempt lists as delivered is not stored (its record came first: listingLocks).
        const { rows: ins } = await c.query<{ id: number; event_seq: number; destination_id: string; part: number }>({ name: 'tl_store_handoffs', text: `WITH v AS (
            SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::bigint[], $8::text[])
              WITH ORDINALITY AS v(s, a, d, t, e, p, rc, i, o)),
          ins AS (INSERT INTO deliveries (event_seq, script_id, destination_id, destination_type, event_id, part, received_at,
              status, attempts, next_attempt_at, created_at, updated_at, lease_owner, lease_until)
            SELECT s, a, d, t, e, p, rc, 'pending', 0, coalesce($11::bigint, $9), $9, $9, $10::text, $11::bigint FROM v
            WHERE NOT ${listedPair('v.d', 'v.s', 'v.p')} ORDER BY o
            ON CONFLICT (event_seq, destination_id, part) DO NOTHING RETURNING id, event_seq, destination_id, part),
          items AS (INSERT INTO delivery_items (delivery_id, item)
            SELECT DISTINCT ON (ins.id) ins.id, v.i FROM ins JOIN v ON v.s = ins.event_seq AND v.d = ins.destination_id AND v.p = ins.part
            ORDER BY ins.id, v.o
            ON CONFLICT (delivery_id) DO UPDATE SET item = excluded.item)
          SELECT id, event_seq, destination_id, part FROM ins`,
        values: [...unstoredColumns(rows), rows.map((x) => JSON.stringify(x.item)), now, lease?.claimId ?? null, lease?.leaseUntil ?? null] });
        if (ins.length > 0 && lease === undefined) await c.query(`NOTIFY ${WORK_CHANNEL}, 'deliveries'`);
        const ids = new Map(ins.map((r) => [`${r.event_seq}#${partKey(r.destination_id, r.part)}`, Number(r.id)]));
        return rows.map((r) => ids.get(`${r.eventSeq}#${partKey(r.destinationId, r.part)}`) ?? null);
      }, { relaxed: true, first: listingLocks(rows.map((r) => r.destinationId), 'exclusive') });
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
        // The partitions the owner held: read again from their cursors (what it was mapping: interrupted, in dispatch_queue).
        const parts = await releaseCursors(c, owner);
        const n = (d.rowCount ?? 0) + (e.rowCount ?? 0) + parts;
        if (n > 0) await c.query(`NOTIFY ${WORK_CHANNEL}, 'deliveries'`);
        return n;
      });
    },

    async leaseHolders() {
      const { rows } = await pool.query<{ owner: string }>(`SELECT DISTINCT lease_owner AS owner FROM deliveries
        WHERE status = 'pending' AND lease_owner IS NOT NULL
        UNION SELECT DISTINCT lease_owner FROM dispatch_queue WHERE lease_owner IS NOT NULL`);
      return [...new Set([...rows.map((r) => r.owner), ...await cursorHolders()])];
    },

    async recoverExpiredLeases(now) {
      return tx(pool, async (c) => {
        const d = await c.query(`UPDATE deliveries SET lease_owner = NULL, lease_until = NULL
          WHERE status = 'pending' AND lease_until IS NOT NULL AND lease_until <= $1`, [now]);
        const e = await c.query('UPDATE dispatch_queue SET lease_owner = NULL, lease_until = NULL WHERE lease_until <= $1', [now]);
        return (d.rowCount ?? 0) + (e.rowCount ?? 0) + await recoverCursors(c, now);
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
        if ((due.rowCount ?? 0) > 0) await c.query(`NOTIFY ${WORK_CHANNEL}, 'deliveries'`);
        return { wasPaused: (un.rowCount ?? 0) > 0, due: due.rowCount ?? 0 };
      });
    },

    ...fanOutMethods,
    ...pgDeliveryQueries(pool, backlog),
  };
}
