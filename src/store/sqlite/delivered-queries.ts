// SQLite: the deliveries delivered by their first attempt that have no row (migration 20,
// docs/delivered-without-row.md), read from the attempts that list them: listed like rows
// (derived ids), their attempt, their counts for stats, replayed with --force (a pending row
// takes the delivery over, the pair is set to null), counted, and what the purge needs to know.
import type Database from 'better-sqlite3';
import {
  DELIVERED_SEQ_SPAN, DERIVED_ID_BASE, PAIRS_PER_ATTEMPT, decodeDeliveryId,
  type DeliveryFilter, type DeliveryStatus, type DeliveryView, type ReplayFilter,
} from '../delivery-views.ts';
import { toAttemptView, toDerivedView, type AttemptRow, type DerivedRow } from '../delivery-rows.ts';

/**
 * The attempts `a` to destination `destination` that may list an event seq from `lo` to `hi`
 * (SQL expressions), through delivery_attempts_delivered_seq: a short range of last_seq.
 */
export const mayList = (lo: string, hi: string, destination: string): string => `a.destination_id = ${destination}
  AND a.delivered IS NOT NULL AND a.last_seq BETWEEN ${lo} AND ${hi} + ${DELIVERED_SEQ_SPAN} AND a.first_seq <= ${hi}`;

/**
 * The pairs `j` (json_each over `a.delivered`) of event seq `seq` that attempts `a` to
 * `destination` list. An event's destinations are its account's (`destinations dd`).
 */
export const deliveredSeq = (seq: string, destination: string): string =>
  `${mayList(seq, seq, destination)} AND j.type = 'array' AND j.value ->> 0 = ${seq}`;

/** Non-null pairs of an attempt's `delivered` (the fast path: none was set to null). */
const PAIRS = `CASE WHEN instr(a.delivered, 'null') = 0 THEN json_array_length(a.delivered)
  ELSE (SELECT count(*) FROM json_each(a.delivered) WHERE type = 'array') END`;

const SELECT = `SELECT a.id AS attempt_id, j.key AS idx, j.value ->> 0 AS event_seq, j.value ->> 1 AS part, a.script_id,
    a.destination_id, dst.type AS destination_type, e.event_id, e.received_at, a.attempted_at, a.status_code,
    (h.paused_at IS NOT NULL) AS paused`;
/**
 * The pairs with their attempts, events and destinations; `s`: the events of an event id or row
 * id lead, with their account's destinations `dd` (CROSS JOIN keeps that order).
 */
const from = (events: boolean) => `FROM ${events ? 'events s JOIN destinations dd ON dd.script_id = s.script_id CROSS JOIN ' : ''}delivery_attempts a JOIN json_each(a.delivered) j
    LEFT JOIN events e ON e.seq = j.value ->> 0
    LEFT JOIN destinations dst ON dst.id = a.destination_id
    LEFT JOIN destination_health h ON h.destination_id = a.destination_id`;

type Where = { where: string[]; args: unknown[]; from: string };

/** Conditions shared by lists and replays: one delivery, an account, a destination, the events of an event id or row id. */
function scope(f: { id?: number; scriptId?: string; destinationId?: string; eventId?: string; eventRowId?: string }): Where | null {
  const where = ['a.delivered IS NOT NULL', "j.type = 'array'"];
  const args: unknown[] = [];
  if (f.id !== undefined) {
    const d = decodeDeliveryId(f.id);
    if (d === null) return null;
    where.push('a.id = ?', 'j.key = ?');
    args.push(d.attemptId, d.index);
  }
  if (f.scriptId !== undefined) { where.push('a.script_id = ?'); args.push(f.scriptId); }
  if (f.destinationId !== undefined) { where.push('a.destination_id = ?'); args.push(f.destinationId); }
  // The events' seqs lead, then the short last_seq range of each.
  if (f.eventRowId !== undefined) { where.push('s.seq = (SELECT seq FROM events WHERE id = ?)'); args.push(f.eventRowId); }
  if (f.eventId !== undefined) { where.push('s.event_id = ?'); args.push(f.eventId); }
  const events = f.eventRowId !== undefined || f.eventId !== undefined;
  if (events) where.push(deliveredSeq('s.seq', 'dd.id'));
  return { where, args, from: from(events) };
}

export function sqliteDeliveredQueries(db: Database.Database) {
  const attempt = db.prepare<[number, number], AttemptRow>(`SELECT a.* FROM delivery_attempts a, json_each(a.delivered) j
    WHERE a.id = ? AND a.delivered IS NOT NULL AND j.key = ? AND j.type = 'array'`);
  // A row taking over a delivered pair (replay --force): pending, due now, no item (mapped again from its event).
  const takeOver = db.prepare(`INSERT INTO deliveries (event_seq, script_id, destination_id, destination_type, event_id, part,
      status, attempts, next_attempt_at, received_at, created_at, updated_at, attempt_id)
    VALUES (@seq, @script, @destination, @type, @eventId, @part, 'pending', 0, @now, @received, @created, @now, @attempt)
    ON CONFLICT (event_seq, destination_id, part) DO NOTHING`);
  const dropPair = db.prepare("UPDATE delivery_attempts SET delivered = json_set(delivered, '$[' || CAST(? AS INTEGER) || ']', NULL) WHERE id = ?");

  /** Replay's matches, oldest first: the event must still be there, the destination not removed. */
  function replayable(f: ReplayFilter): Where | null {
    if (!f.statuses.includes('delivered')) return null;
    const s = scope({ id: f.deliveryId, scriptId: f.scriptId, destinationId: f.destinationId, eventId: f.eventId });
    if (s === null) return null;
    s.where.push('e.seq IS NOT NULL', 'dst.removed_at IS NULL');
    if (f.since !== undefined) { s.where.push('a.attempted_at >= ?'); s.args.push(f.since); }
    return s;
  }

  return {
    /** Derived deliveries matching a listing's filter, newest first, at most `limit`. */
    list(f: DeliveryFilter, limit: number): DeliveryView[] {
      if (limit <= 0 || (f.status !== undefined && f.status !== 'delivered')) return [];
      if (f.beforeId !== undefined && f.beforeId <= DERIVED_ID_BASE) return [];
      const s = scope(f);
      if (s === null) return [];
      if (f.beforeId !== undefined) {
        const before = f.beforeId - DERIVED_ID_BASE;
        s.where.push('a.id <= ?', `a.id * ${PAIRS_PER_ATTEMPT} + j.key < ?`);
        s.args.push(Math.floor(before / PAIRS_PER_ATTEMPT), before);
      }
      const rows = db.prepare(`${SELECT} ${s.from} WHERE ${s.where.join(' AND ')} ORDER BY a.id DESC, j.key DESC LIMIT ?`)
        .all(...s.args, limit) as DerivedRow[];
      return rows.map(toDerivedView);
    },

    /** The attempt of a derived id (none for a row id, or a pair replayed since). */
    attempts(id: number) {
      const d = decodeDeliveryId(id);
      return d === null ? [] : attempt.all(d.attemptId, d.index).map(toAttemptView);
    },

    /** Delivered counts per destination, as stats' count rows. */
    counts(scriptId: string | undefined) {
      const rows = db.prepare(`SELECT a.destination_id, sum(${PAIRS}) AS n FROM delivery_attempts a
        WHERE a.delivered IS NOT NULL ${scriptId === undefined ? '' : 'AND a.script_id = ?'} GROUP BY a.destination_id`)
        .all(...(scriptId === undefined ? [] : [scriptId])) as { destination_id: string; n: number }[];
      return rows.map((r) => ({ ...r, status: 'delivered' as DeliveryStatus, oldest: null, next_due: null }));
    },

    /** How many derived deliveries `replay(f)` would re-queue. */
    countReplayable(f: ReplayFilter): number {
      const s = replayable(f);
      if (s === null) return 0;
      return (db.prepare(`SELECT count(*) AS n ${s.from} WHERE ${s.where.join(' AND ')}`).get(...s.args) as { n: number }).n;
    },

    /** Re-queues up to `limit` matching derived deliveries (in the caller's transaction): each gets a pending row, its pair set to null. */
    replay(f: ReplayFilter, now: number, limit: number | undefined): number {
      const s = replayable(f);
      if (s === null || (limit !== undefined && limit <= 0)) return 0;
      const rows = db.prepare(`${SELECT} ${s.from} WHERE ${s.where.join(' AND ')} ORDER BY a.id, j.key
        ${limit === undefined ? '' : `LIMIT ${Math.floor(limit)}`}`).all(...s.args) as DerivedRow[];
      for (const r of rows) {
        takeOver.run({ seq: r.event_seq, script: r.script_id, destination: r.destination_id, type: r.destination_type, eventId: r.event_id,
          part: r.part, now, received: r.received_at, created: r.attempted_at, attempt: r.attempt_id });
        dropPair.run(r.idx, r.attempt_id);
      }
      return rows.length;
    },

    /** The derived deliveries the attempts with ids below `edge` list (the purge removes them with their attempts). */
    purgedWith(edge: number): number {
      return (db.prepare(`SELECT coalesce(sum(${PAIRS}), 0) AS n FROM delivery_attempts a WHERE a.id < ? AND a.delivered IS NOT NULL`)
        .get(edge) as { n: number }).n;
    },
  };
}

/** An event `e` some kept attempt lists as delivered: it stays, as a delivered row kept it (the purge's condition). */
export const LISTED_EVENT = `EXISTS (SELECT 1 FROM destinations dd CROSS JOIN delivery_attempts a, json_each(a.delivered) j
  WHERE dd.script_id = e.script_id AND ${deliveredSeq('e.seq', 'dd.id')})`;
