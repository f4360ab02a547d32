// The event append transaction, shared by both write paths: the store's own connection
// (in-process) and the writer thread (writer-thread.ts). Rows are first turned into
// PreparedRow on the calling thread: plain strings and numbers, cheap to post to a thread,
// with the JSON columns already serialised. The payload is packed (payload-codec.ts) here, on
// the writer thread when there is one, before the transaction takes the write lock.
// Loaded in the writer thread through tsx's require hook: no top-level await.
import type Database from 'better-sqlite3';
import type { DedupEnvironment, EventStatus } from '../types.ts';
import { DEFAULT_DEDUP_WINDOW_MS, type PreparedRow } from '../prepare-row.ts';
import { packPayload, type StoredPayload } from '../payload-codec.ts';
import { processWriteGate } from './write-gate.ts';

/**
 * The append of EventStore.append on `db`: one BEGIN IMMEDIATE transaction for all rows.
 * An accepted event is owed to its destinations by being stored: the fan-out reads it from
 * the events table after its cursor (fan-out-cursor.ts), so nothing else is written for it.
 * An accepted row with an event id either claims its (account, environment, name, event id) dedup key
 * or, when the key was first seen within `dedupWindowMs`, is stored as `duplicate`; accepted
 * FUNNEL_SOURCE_EVENTS record their product ids as seen. Returns each row's stored status;
 * throws (and stores nothing) when the transaction fails. The commit goes through the
 * process's write gate as urgent: acknowledgements wait on it.
 */
export function createAppender(db: Database.Database, dedupWindowMs = DEFAULT_DEDUP_WINDOW_MS): (rows: readonly PreparedRow[]) => EventStatus[] {
  const insertEvent = db.prepare(`INSERT INTO events (id, script_id, name, event_id, status, source, request_id, received_at, errors, warnings,
    payload, payload_packed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const insertSeen = db.prepare('INSERT OR IGNORE INTO seen_products (script_id, product_id) VALUES (?, ?)');
  const getDedup = db.prepare<[string, DedupEnvironment, string, string], { first_seen_at: number }>(
    'SELECT first_seen_at FROM dedup_keys WHERE script_id = ? AND environment = ? AND name = ? AND event_id = ?');
  const putDedup = db.prepare(`INSERT INTO dedup_keys (script_id, environment, name, event_id, first_seen_at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (script_id, environment, name, event_id) DO UPDATE SET first_seen_at = excluded.first_seen_at`);

  const dedupStatus = (r: PreparedRow): EventStatus => {
    if (r.status !== 'accepted' || r.eventId === null || r.name === null) return r.status;
    const seen = getDedup.get(r.scriptId, r.environment, r.name, r.eventId);
    if (seen && r.receivedAt - seen.first_seen_at < dedupWindowMs) return 'duplicate';
    putDedup.run(r.scriptId, r.environment, r.name, r.eventId, r.receivedAt);
    return 'accepted';
  };
  const appendTx = db.transaction((rows: readonly PreparedRow[], payloads: readonly StoredPayload[]) => {
    const statuses: EventStatus[] = [];
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      const status = dedupStatus(r);
      statuses.push(status);
      insertEvent.run(r.id, r.scriptId, r.name, r.eventId, status, r.source, r.requestId, r.receivedAt, r.errors, r.warnings,
        payloads[i].payload, payloads[i].packed);
      if (status !== 'accepted') continue;
      for (const id of r.productIds) insertSeen.run(r.scriptId, id);
    }
    return statuses;
  });
  const gate = processWriteGate();
  const urgent = { urgent: true, waitMs: Number(db.pragma('busy_timeout', { simple: true })) };
  return (rows) => {
    if (rows.length === 0) return [];
    const payloads = rows.map((r) => packPayload(r.payload));
    return gate.run(() => appendTx.immediate(rows, payloads), urgent);
  };
}
