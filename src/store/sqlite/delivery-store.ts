// SQLite deliveries: claims with leases fenced by claim id, attempt records and destination
// health (the fan-out's side, claims and commits: dispatch-queue.ts, fan-out-cursor.ts). A leased delivery's next_attempt_at is its lease end,
// so work whose holder died is simply due again; writes use BEGIN IMMEDIATE.
// Bookkeeping commits without the per-commit fsync (relaxed-commit.ts).
import type Database from 'better-sqlite3';
import { MAX_RESPONSE_BYTES, pauseOf } from '../delivery-contract.ts';
import { encodeRequest, keepDelivered, toClaimed, truncateBytes, type ClaimRow, type DeliveredPair } from '../delivery-rows.ts';
import type {
  ActiveDestination, AttemptRecord, DeliveryStore, DeliveryUpdate, RecordResult, UnstoredRow,
} from '../delivery-contract.ts';
import { sqliteDeliveryQueries } from './delivery-queries.ts';
import { sqliteDeliveryMaintenance } from './delivery-maintenance.ts';
import { relaxedCommit } from './relaxed-commit.ts';
import { mayList } from './delivered-queries.ts';
import { PUT_ITEM_SQL, sqliteDispatchQueue } from './dispatch-queue.ts';
import { sqliteFanOutCursor } from './fan-out-cursor.ts';

export { FAN_OUT_ROWS_PER_COMMIT } from './dispatch-queue.ts';

interface DestinationRow {
  id: string; script_id: string; type: string; name: string; enabled: number; settings: string;
  created_at: number; updated_at: number; paused_at: number | null; paused_destination_updated_at: number | null;
}

/** A destination's due pending deliveries that match `which` (literal, so a partial index applies), oldest due first, with item and event. */
const dueSql = (which: string) => `SELECT d.id, d.event_seq, d.script_id, d.destination_id,
    d.destination_type, d.event_id, d.attempts, d.received_at, d.part, i.item, e.payload, e.payload_packed, e.id AS event_uuid
  FROM deliveries d LEFT JOIN events e ON e.seq = d.event_seq LEFT JOIN delivery_items i ON i.delivery_id = d.id
  WHERE d.destination_id = ? AND d.status = 'pending' AND ${which} AND d.next_attempt_at <= ?
  ORDER BY d.next_attempt_at LIMIT ?`;

/** The listing columns of an attempt that lists nothing. */
const NOTHING_LISTED = { scriptId: null, delivered: null, firstSeq: null, lastSeq: null } as const;

export function sqliteDeliveryStore(db: Database.Database): DeliveryStore {
  const relaxed = relaxedCommit(db);
  const cursor = sqliteFanOutCursor(db);
  const q = {
    // A delivery's item, kept while it may still be sent (delivery_items: migration 16).
    putItem: db.prepare(PUT_ITEM_SQL),
    dropItem: db.prepare('DELETE FROM delivery_items WHERE delivery_id = ?'),
    // A handed-off delivery's row, in the state its attempt left it: inserted, or, where its lane
    // stored it meanwhile (in flight for a while), updated under the lane's claim:
    // seq, script, destination id, type, event id, part, status, attempts, next, status code, error, received, now, now, delivered at, attempt, claim.
    // The row keeps the first attempt recorded for it (migration 19); RETURNING says whether it is this one.
    insertRecorded: db.prepare<unknown[], { id: number; attempt_id: number | null }>(`INSERT INTO deliveries (event_seq, script_id, destination_id, destination_type, event_id, part, status,
        attempts, next_attempt_at, last_status_code, last_error, received_at, created_at, updated_at, delivered_at, attempt_id)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (event_seq, destination_id, part) DO UPDATE SET
        status = excluded.status, attempts = excluded.attempts, next_attempt_at = excluded.next_attempt_at,
        last_status_code = coalesce(excluded.last_status_code, last_status_code), last_error = excluded.last_error,
        updated_at = excluded.updated_at, delivered_at = coalesce(excluded.delivered_at, delivered_at),
        lease_owner = NULL, lease_until = NULL, attempt_id = coalesce(attempt_id, excluded.attempt_id)
      WHERE lease_owner = ? RETURNING id, attempt_id`),
    // A handed-off delivery stored pending before its attempt (handed back: due; in flight: leased to its lane's claim):
    // seq, script, destination id, type, event id, part, next, received, now, now, lease owner, lease until.
    insertHandoff: db.prepare<unknown[], { id: number }>(`INSERT INTO deliveries (event_seq, script_id, destination_id, destination_type, event_id, part, status,
        attempts, next_attempt_at, received_at, created_at, updated_at, lease_owner, lease_until)
      VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?, ?, ?) ON CONFLICT (event_seq, destination_id, part) DO NOTHING RETURNING id`),
    // Due retries (index deliveries_retry_due, migration 18), then due first attempts: destination, now, limit.
    dueRetries: db.prepare<[string, number, number], ClaimRow>(dueSql('d.attempts > 0')),
    dueFirst: db.prepare<[string, number, number], ClaimRow>(dueSql('d.attempts = 0')),
    lease: db.prepare('UPDATE deliveries SET lease_owner = ?, lease_until = ?, next_attempt_at = ? WHERE id = ?'),
    nextDue: db.prepare<[string], { t: number | null }>(
      "SELECT min(next_attempt_at) AS t FROM deliveries WHERE destination_id = ? AND status = 'pending'"),
    // ..., and what it delivered that has no row: account, [event_seq, part] pairs, their seq range (migration 20).
    insertAttempt: db.prepare(`INSERT INTO delivery_attempts (destination_id, attempted_at, status_code, latency_ms,
        response_body, error_class, outcome, message, events, request, script_id, delivered, first_seq, last_seq)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    // Whether a handed-off delivery has a row (stored in flight, or by a fan-out of its event again).
    hasRow: db.prepare<[number, string, number], { x: number }>(
      'SELECT 1 AS x FROM deliveries WHERE event_seq = ? AND destination_id = ? AND part = ?'),
    // What other attempts to the destination list among seqs min..max (a fan-out of the event again sent it too): destination, min, max.
    listedBy: db.prepare<{ destination: string; min: number; max: number }, { delivered: string }>(
      `SELECT a.delivered FROM delivery_attempts a WHERE ${mayList('@min', '@max', '@destination')}`),
    linkAttempt: db.prepare('INSERT OR IGNORE INTO delivery_attempt_items (attempt_id, delivery_id) VALUES (?, ?)'),
    // Positional: status, attempts, next, http (0/1), status code, error, now, delivered at (null unless delivered), attempt, id, claim.
    update: db.prepare<unknown[], { attempt_id: number | null }>(`UPDATE deliveries SET status = ?, attempts = ?, next_attempt_at = ?,
        lease_owner = NULL, lease_until = NULL, last_status_code = CASE WHEN ? = 1 THEN ? ELSE last_status_code END, last_error = ?,
        updated_at = ?, delivered_at = coalesce(?, delivered_at), attempt_id = coalesce(attempt_id, ?)
      WHERE id = ? AND lease_owner = ? RETURNING attempt_id`),
    healthOk: db.prepare(`INSERT INTO destination_health (destination_id, last_success_at) VALUES (?, ?)
      ON CONFLICT (destination_id) DO UPDATE SET last_success_at = excluded.last_success_at, failing_since = NULL`),
    healthFail: db.prepare(`INSERT INTO destination_health (destination_id, last_failure_at, failing_since) VALUES (?, ?, ?)
      ON CONFLICT (destination_id) DO UPDATE SET last_failure_at = excluded.last_failure_at,
        failing_since = COALESCE(destination_health.failing_since, excluded.failing_since)`),
    pause: db.prepare(`UPDATE destination_health SET paused_at = @now, pause_reason = @reason,
        paused_destination_updated_at = (SELECT updated_at FROM destinations WHERE id = @id)
      WHERE destination_id = @id AND paused_at IS NULL AND failing_since IS NOT NULL AND failing_since <= @since`),
    pausedAt: db.prepare<[string], { paused_at: number | null }>('SELECT paused_at FROM destination_health WHERE destination_id = ?'),
    release: db.prepare(`UPDATE deliveries SET lease_owner = NULL, lease_until = NULL, next_attempt_at = ?
      WHERE id = ? AND lease_owner = ? AND status = 'pending'`),
    holders: db.prepare<[], { owner: string }>(`SELECT DISTINCT lease_owner AS owner FROM deliveries
      WHERE status = 'pending' AND lease_owner IS NOT NULL
      UNION SELECT DISTINCT lease_owner FROM dispatch_queue WHERE lease_owner IS NOT NULL`),
    releaseOwnerDeliveries: db.prepare(`UPDATE deliveries SET lease_owner = NULL, lease_until = NULL, next_attempt_at = ?
      WHERE status = 'pending' AND lease_owner >= ? AND lease_owner < ?`),
    releaseOwnerEvents: db.prepare(`UPDATE dispatch_queue SET lease_owner = NULL, lease_until = NULL
      WHERE lease_owner >= ? AND lease_owner < ?`),
    recoverDeliveries: db.prepare(`UPDATE deliveries SET lease_owner = NULL, lease_until = NULL
      WHERE status = 'pending' AND lease_until IS NOT NULL AND lease_until <= ?`),
    recoverEvents: db.prepare('UPDATE dispatch_queue SET lease_owner = NULL, lease_until = NULL WHERE lease_until <= ?'),
    active: db.prepare<[], DestinationRow>(`SELECT d.id, d.script_id, d.type, d.name, d.enabled, d.settings, d.created_at,
        d.updated_at, h.paused_at, h.paused_destination_updated_at FROM destinations d LEFT JOIN destination_health h ON h.destination_id = d.id
      WHERE d.removed_at IS NULL ORDER BY d.created_at, d.id`),
    unpause: db.prepare(`UPDATE destination_health SET paused_at = NULL, pause_reason = NULL, failing_since = NULL,
        paused_destination_updated_at = NULL WHERE destination_id = ? AND paused_at IS NOT NULL`),
    clearFailing: db.prepare('UPDATE destination_health SET failing_since = NULL WHERE destination_id = ?'),
    dueNow: db.prepare(`UPDATE deliveries SET next_attempt_at = min(next_attempt_at, @now)
      WHERE destination_id = @id AND status = 'pending' AND lease_owner IS NULL`),
  };

  const claimTx = db.transaction((destinationId: string, claimId: string, now: number, leaseUntil: number, limit: number, retriesOnly: boolean) => {
    const rows = q.dueRetries.all(destinationId, now, limit);
    if (!retriesOnly && rows.length < limit) rows.push(...q.dueFirst.all(destinationId, now, limit - rows.length));
    for (const r of rows) q.lease.run(claimId, leaseUntil, leaseUntil, r.id);
    return rows;
  });

  /**
   * The handed-off deliveries a record's attempt delivered by itself that have no row: the
   * attempt lists them (`delivered`) instead of a row each, as far as keepDelivered keeps them
   * (added to `listed`); the others get rows as before. One another attempt lists already (its
   * event was fanned out again meanwhile), delivered or not now, is another holder's, as a row
   * would be (`taken`): no row, not listed again.
   */
  function deliveredWithoutRow(rec: AttemptRecord, listed: Set<DeliveryUpdate>, taken: Set<DeliveryUpdate>) {
    const handedOff = rec.updates.filter((u) => u.row !== undefined);
    if (handedOff.length === 0) return NOTHING_LISTED;
    const seqs = handedOff.map((u) => u.row!.eventSeq);
    const others = q.listedBy.all({ destination: rec.destinationId, min: Math.min(...seqs), max: Math.max(...seqs) });
    if (others.length > 0) {
      const pairs = new Set(others.flatMap((o) => (JSON.parse(o.delivered) as (DeliveredPair | null)[]).map((p) => (p === null ? '' : `${p[0]}#${p[1]}`))));
      for (const u of handedOff) if (pairs.has(`${u.row!.eventSeq}#${u.row!.part}`)) taken.add(u);
    }
    const candidates = handedOff.filter((u) => !taken.has(u) && u.status === 'delivered' && u.attempts === 1
      && q.hasRow.get(u.row!.eventSeq, u.row!.destinationId, u.row!.part) === undefined);
    if (candidates.length === 0) return NOTHING_LISTED;
    const kept = keepDelivered(candidates.map((u): DeliveredPair => [u.row!.eventSeq, u.row!.part]));
    candidates.forEach((u, i) => { if (kept.keep[i]) listed.add(u); });
    return { scriptId: candidates[0].row!.scriptId, delivered: JSON.stringify(kept.delivered), firstSeq: kept.firstSeq, lastSeq: kept.lastSeq };
  }

  const recordTx = db.transaction((records: readonly AttemptRecord[]): RecordResult[] => {
    const results: RecordResult[] = [];
    // A run of successes for one destination needs only its last health write, and its pause
    // state read once: both are settled per destination before anything else touches it.
    const lastOk = new Map<string, number>();
    const paused = new Map<string, boolean>();
    const settleOk = (destinationId: string) => {
      const at = lastOk.get(destinationId);
      if (at !== undefined) q.healthOk.run(destinationId, at);
      lastOk.delete(destinationId);
    };
    const pausedNow = (destinationId: string) => {
      let p = paused.get(destinationId);
      if (p === undefined) paused.set(destinationId, (p = (q.pausedAt.get(destinationId)?.paused_at ?? null) !== null));
      return p;
    };
    for (const rec of records) {
      const { http } = rec;
      let attempt: number | bigint | null = null;
      const listed = new Set<DeliveryUpdate>();
      const taken = new Set<DeliveryUpdate>();
      if (http !== null) {
        const { scriptId, delivered, firstSeq, lastSeq } = deliveredWithoutRow(rec, listed, taken);
        const attemptId = q.insertAttempt.run(rec.destinationId, rec.at, http.statusCode, Math.round(http.latencyMs),
          truncateBytes(http.responseBody, MAX_RESPONSE_BYTES), http.errorClass, http.outcome, rec.message, rec.updates.length,
          encodeRequest(http.request), scriptId, delivered, firstSeq, lastSeq).lastInsertRowid;
        attempt = attemptId;
      }
      const applied: number[] = [];
      const error = rec.message;
      for (const u of rec.updates) {
        const delivered = u.status === 'delivered';
        const r = u.row;
        if (listed.has(u)) {
          applied.push(u.id); // delivered by this attempt, no row: the attempt lists it
          continue;
        }
        if (taken.has(u)) continue; // another attempt lists it (the event was fanned out again)
        if (r !== undefined) {
          const row = q.insertRecorded.get(r.eventSeq, r.scriptId, r.destinationId, r.destinationType, r.eventId, r.part,
            u.status, u.attempts, u.nextAttemptAt, http?.statusCode ?? null,
            delivered ? null : u.message ?? error, r.receivedAt, rec.at, rec.at, delivered ? rec.at : null, attempt, rec.claimId);
          if (row === undefined) continue; // its row is another holder's (the event was fanned out again)
          // A delivered one keeps no item (what was sent is on its attempt); a retry or failure keeps it.
          if (delivered) q.dropItem.run(row.id);
          else q.putItem.run(row.id, JSON.stringify(r.item));
          if (attempt !== null && row.attempt_id !== attempt) q.linkAttempt.run(attempt, row.id);
          applied.push(u.id);
          continue;
        }
        const row = q.update.get(u.status, u.attempts, u.nextAttemptAt, http === null ? 0 : 1, http?.statusCode ?? null,
          delivered ? null : u.message ?? error, rec.at, delivered ? rec.at : null, attempt, u.id, rec.claimId);
        // The attempt carried it either way: linked unless its row keeps it (fenced, or attempted before: a link).
        if (attempt !== null && row?.attempt_id !== attempt) q.linkAttempt.run(attempt, u.id);
        if (row !== undefined && delivered) q.dropItem.run(u.id);
        if (row !== undefined) applied.push(u.id);
      }
      if (http !== null) {
        if (http.outcome === 'success') lastOk.set(rec.destinationId, rec.at);
        else {
          settleOk(rec.destinationId);
          q.healthFail.run(rec.destinationId, rec.at, rec.at);
          const pause = pauseOf(rec);
          if (pause !== null) q.pause.run({ now: rec.at, reason: pause.reason, id: rec.destinationId, since: pause.bound });
          paused.delete(rec.destinationId); // a pause may have been set just now
        }
      }
      results.push({ applied, paused: pausedNow(rec.destinationId) });
    }
    for (const id of [...lastOk.keys()]) settleOk(id);
    return results;
  });

  const storeHandoffsTx = db.transaction((rows: readonly UnstoredRow[], now: number, items: readonly string[], lease: { claimId: string; leaseUntil: number } | undefined) =>
    rows.map((r, i) => {
      const row = q.insertHandoff.get(r.eventSeq, r.scriptId, r.destinationId, r.destinationType, r.eventId, r.part,
        lease?.leaseUntil ?? now, r.receivedAt, now, now, lease?.claimId ?? null, lease?.leaseUntil ?? null);
      if (row === undefined) return null;
      q.putItem.run(row.id, items[i]);
      return row.id;
    }));

  const releaseTx = db.transaction((claimId: string, now: number, ids: readonly number[]) =>
    ids.reduce((n, id) => n + q.release.run(now, id, claimId).changes, 0));

  const releaseOwnerTx = db.transaction((owner: string, now: number) => {
    // Claim ids are `${owner}#…`: everything between `owner#` and `owner$` ('$' follows '#').
    const lo = `${owner}#`;
    const hi = `${owner}$`;
    // The fan-out cursor's first: what it moves into the queue is released with the rest.
    const fromCursor = cursor.release(owner);
    return q.releaseOwnerDeliveries.run(now, lo, hi).changes + q.releaseOwnerEvents.run(lo, hi).changes + fromCursor;
  });

  const resumeTx = db.transaction((destinationId: string, now: number) => {
    const wasPaused = q.unpause.run(destinationId).changes > 0;
    q.clearFailing.run(destinationId);
    return { wasPaused, due: q.dueNow.run({ now, id: destinationId }).changes };
  });



  return {
    async claimDeliveries(destinationId, claimId, now, leaseUntil, limit, opts = {}) {
      return toClaimed(relaxed(claimTx, destinationId, claimId, now, leaseUntil, limit, opts.retriesOnly === true));
    },
    async nextDue(destinationId) {
      return q.nextDue.get(destinationId)?.t ?? null;
    },
    async recordAttempts(records) {
      return records.length === 0 ? [] : relaxed(recordTx, records);
    },
    async storeHandoffs(rows, now, lease) {
      return rows.length === 0 ? [] : relaxed(storeHandoffsTx, rows, now, rows.map((r) => JSON.stringify(r.item)), lease);
    },
    async release(claimId, now, ids) {
      return ids.length === 0 ? 0 : relaxed(releaseTx, claimId, now, ids);
    },
    async releaseOwner(owner, now) {
      return releaseOwnerTx.immediate(owner, now);
    },
    async leaseHolders() {
      const holders = q.holders.all().map((r) => r.owner);
      const fanOut = cursor.holder();
      return fanOut === null || holders.includes(fanOut) ? holders : [...holders, fanOut];
    },
    async recoverExpiredLeases(now) {
      return db.transaction(() => q.recoverDeliveries.run(now).changes + q.recoverEvents.run(now).changes + cursor.lapse(now)).immediate();
    },
    async activeDestinations(): Promise<ActiveDestination[]> {
      return q.active.all().map((r) => ({
        id: r.id, scriptId: r.script_id, type: r.type, name: r.name, enabled: r.enabled === 1,
        settings: JSON.parse(r.settings) as Record<string, unknown>, createdAt: r.created_at, updatedAt: r.updated_at,
        pausedAt: r.paused_at, pausedDestinationUpdatedAt: r.paused_destination_updated_at,
      }));
    },
    async resume(destinationId, now) {
      return resumeTx.immediate(destinationId, now);
    },
    ...sqliteDispatchQueue(db, relaxed, cursor),
    ...sqliteDeliveryQueries(db),
    ...sqliteDeliveryMaintenance(db),
  };
}
