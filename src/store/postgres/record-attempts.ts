// PostgreSQL attempt records, a whole group commit in one statement: every attempt of the
// batch, the updates of stored rows (fenced on each record's claim), the rows of handed-off
// deliveries (inserted, or updated where their lane stored them leased to the claim), their
// items, the links and the health of destinations that only succeeded. A record that failed
// adds its health and pause statements after it, in order. A delivery keeps the first attempt
// recorded for it in its row (`attempt_id`); only the others (retries, a request that carried
// it while another claim held it) get a link row in delivery_attempt_items, so a delivery
// settled by its first request costs no link (PostgreSQL migration 12, SQLite 19). A handed-off
// delivery its first attempt delivered, with no row, gets none at all: the attempt lists it
// (`delivered`, PostgreSQL migration 13, SQLite 20; docs/delivered-without-row.md).
import type pg from 'pg';
import type { AttemptRecord, DeliveryUpdate, RecordResult } from '../delivery-contract.ts';
import { MAX_RESPONSE_BYTES, partKey } from '../delivery-contract.ts';
import { encodeRequest, keepDelivered, truncateBytes } from '../delivery-rows.ts';
import { listedPair } from './delivered-pairs.ts';

/**
 * The batch's statement, in parts: recs, one row per record (r = its index) with its attempt
 * when a request went out (ids drawn once, in a MATERIALIZED CTE, so links and rows meet the
 * ids inserted); su/upd, stored rows (`first`: the first update of the id in the batch, the only
 * one applied; a later one is linked only); ui/ins, handed-off rows, one per key (the first);
 * their items, links, and the health of destinations that only succeeded. A handed-off delivery
 * its first attempt delivered (`k`: within what an attempt may list) that has no row (nr, as the
 * statement's snapshot shows it) gets none: its attempt lists it (`delivered`, with the first
 * and last seq listed and the account), unless another attempt to its destination lists it
 * already (`fresh` false: its event was fanned out again meanwhile and sent again; the record is
 * fenced as by a row another claim holds). Whatever its verdict, a handed-off delivery another
 * attempt lists gets no row either (`ins`): the listed pair is its state, as a row would be. That look-up is a short range of
 * delivery_attempts_delivered_seq: the destination's attempts listing seqs from this one on. A batch without stored rows (the usual: every delivery
 * handed off) or without handed-off ones leaves their parts out: the executor starts every part
 * of a statement, empty or not.
 */
const RECS = `WITH recs AS (
    SELECT * FROM unnest($R1::text[], $R2::bigint[], $R3::boolean[], $R4::int[], $R5::text[], $R6::int[], $R7::text[], $R8::text[], $R9::text[],
      $R10::text[], $R11::int[], $R12::text[]) WITH ORDINALITY AS r(claim, at, http, sc, dest, lat, body, ec, oc, msg, ev, req, o)),`;
const HANDED = `ui AS (SELECT * FROM unnest($U1::bigint[], $U2::text[], $U3::text[], $U4::text[], $U5::text[], $U6::int[], $U7::bigint[], $U8::text[], $U9::text[],
      $U10::int[], $U11::bigint[], $U12::text[], $U13::int[], $U14::boolean[]) WITH ORDINALITY AS v(s, a, d, t, e, p, rc, i, st, n, nx, err, r, k, o)),
  nr AS MATERIALIZED (SELECT v.s, v.a, v.d, v.p, v.r, v.o,
      NOT ${listedPair('v.d', 'v.s', 'v.p')} AS fresh
    FROM ui v
    WHERE v.k AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_seq = v.s AND d.destination_id = v.d AND d.part = v.p)),`;
const ATTEMPTS = `x AS MATERIALIZED (SELECT nextval('delivery_attempts_id_seq') AS id, recs.* FROM recs WHERE http),
  a AS (INSERT INTO delivery_attempts (id, destination_id, attempted_at, status_code, latency_ms, response_body, error_class, outcome, message, events, request)
    SELECT id, dest, at, sc, lat, body, ec, oc, msg, ev, req FROM x),`;
const LISTING = `x AS MATERIALIZED (SELECT nextval('delivery_attempts_id_seq') AS id, recs.*, l.* FROM recs LEFT JOIN LATERAL (
      SELECT json_agg(json_build_array(nr.s, nr.p) ORDER BY nr.o)::text AS delivered, min(nr.s) AS first_seq, max(nr.s) AS last_seq,
        min(nr.a) AS script_id FROM nr WHERE nr.r = recs.o AND nr.fresh) l ON true WHERE http),
  a AS (INSERT INTO delivery_attempts (id, destination_id, attempted_at, status_code, latency_ms, response_body, error_class, outcome, message, events, request,
      script_id, delivered, first_seq, last_seq)
    SELECT id, dest, at, sc, lat, body, ec, oc, msg, ev, req, script_id, delivered, first_seq, last_seq FROM x),`;
const STORED = `su AS (SELECT * FROM unnest($S1::bigint[], $S2::text[], $S3::int[], $S4::bigint[], $S5::text[], $S6::int[], $S7::boolean[]) AS s(id, st, n, nx, err, r, first)),
  upd AS (UPDATE deliveries d SET status = s.st, attempts = s.n, next_attempt_at = s.nx, lease_owner = NULL, lease_until = NULL,
      last_status_code = CASE WHEN rx.http THEN rx.sc ELSE d.last_status_code END,
      last_error = CASE WHEN s.st = 'delivered' THEN NULL ELSE s.err END,
      updated_at = rx.at, delivered_at = CASE WHEN s.st = 'delivered' THEN rx.at ELSE d.delivered_at END,
      attempt_id = coalesce(d.attempt_id, x.id)
    FROM su s JOIN recs rx ON rx.o = s.r LEFT JOIN x ON x.o = s.r
    WHERE s.first AND d.id = s.id AND d.lease_owner = rx.claim RETURNING d.id, d.status, d.attempt_id),`;
const UNSTORED = `ins AS (INSERT INTO deliveries (event_seq, script_id, destination_id, destination_type, event_id, part, received_at, status,
      attempts, next_attempt_at, last_status_code, last_error, created_at, updated_at, delivered_at, attempt_id)
    SELECT v.s, v.a, v.d, v.t, v.e, v.p, v.rc, v.st, v.n, v.nx, rx.sc, CASE WHEN v.st = 'delivered' THEN NULL ELSE v.err END, rx.at, rx.at,
      CASE WHEN v.st = 'delivered' THEN rx.at END, x.id
    FROM ui v JOIN recs rx ON rx.o = v.r LEFT JOIN x ON x.o = v.r WHERE v.o NOT IN (SELECT o FROM nr) AND NOT ${listedPair('v.d', 'v.s', 'v.p')}
    ON CONFLICT (event_seq, destination_id, part) DO UPDATE SET status = excluded.status, attempts = excluded.attempts,
      next_attempt_at = excluded.next_attempt_at, last_status_code = coalesce(excluded.last_status_code, deliveries.last_status_code),
      last_error = excluded.last_error, updated_at = excluded.updated_at, delivered_at = coalesce(excluded.delivered_at, deliveries.delivered_at),
      lease_owner = NULL, lease_until = NULL, attempt_id = coalesce(deliveries.attempt_id, excluded.attempt_id)
    WHERE deliveries.lease_owner = (SELECT rx.claim FROM ui v JOIN recs rx ON rx.o = v.r
      WHERE v.s = excluded.event_seq AND v.d = excluded.destination_id AND v.p = excluded.part)
    RETURNING id, event_seq, destination_id, part, status, attempt_id, xmax <> 0 AS existed),
  kept AS (INSERT INTO delivery_items (delivery_id, item)
    SELECT ins.id, v.i FROM ins JOIN ui v ON v.s = ins.event_seq AND v.d = ins.destination_id AND v.p = ins.part
    WHERE ins.status <> 'delivered' AND v.i IS NOT NULL
    ON CONFLICT (delivery_id) DO UPDATE SET item = excluded.item),`;
const HEALTH = `health AS (INSERT INTO destination_health (destination_id, last_success_at) SELECT * FROM unnest($H1::text[], $H2::bigint[])
    ON CONFLICT (destination_id) DO UPDATE SET last_success_at = excluded.last_success_at, failing_since = NULL)`;

/** The statement for a batch with stored rows, handed-off rows or both, its $n numbered in order of the values. */
function recordSql(stored: boolean, unstored: boolean): string {
  const gone = [stored ? "SELECT id FROM upd WHERE status = 'delivered'" : '', unstored ? "SELECT id FROM ins WHERE status = 'delivered' AND existed" : '']
    .filter(Boolean).join(' UNION ALL ');
  const links = [
    stored ? 'SELECT x.id, s.id FROM su s JOIN x ON x.o = s.r WHERE NOT EXISTS (SELECT 1 FROM upd WHERE upd.id = s.id AND upd.attempt_id = x.id)' : '',
    unstored ? `SELECT x.id, ins.id FROM ins JOIN ui v ON v.s = ins.event_seq AND v.d = ins.destination_id AND v.p = ins.part JOIN x ON x.o = v.r
    WHERE ins.attempt_id IS DISTINCT FROM x.id` : '',
  ].filter(Boolean).join('\n    UNION ALL\n    ');
  const out = [
    stored ? "SELECT 'stored' AS kind, id, NULL::bigint AS event_seq, NULL AS destination_id, NULL::int AS part FROM upd" : '',
    unstored ? "SELECT 'inserted' AS kind, id, event_seq, destination_id, part FROM ins UNION ALL SELECT 'listed', NULL, s, d, p FROM nr WHERE fresh" : '',
    "SELECT 'paused' AS kind, NULL::bigint AS id, NULL::bigint AS event_seq, destination_id, NULL::int AS part FROM destination_health WHERE destination_id = ANY($H3::text[]) AND paused_at IS NOT NULL",
  ].filter(Boolean).join('\n  UNION ALL ');
  const text = [RECS, unstored ? HANDED : '', unstored ? LISTING : ATTEMPTS, stored ? STORED : '', unstored ? UNSTORED : '',
    gone === '' ? '' : `gone AS (DELETE FROM delivery_items WHERE delivery_id = ANY(ARRAY(${gone}))),`,
    links === '' ? '' : `links AS (INSERT INTO delivery_attempt_items (attempt_id, delivery_id)\n    ${links}\n    ON CONFLICT DO NOTHING),`,
    HEALTH, out].filter(Boolean).join('\n  ');
  const base: Record<string, number> = { R: 0, S: 12, U: stored ? 19 : 12, H: (stored ? 19 : 12) + (unstored ? 14 : 0) };
  return text.replace(/\$([RSUH])(\d+)/g, (_, g: string, n: string) => `$${base[g] + Number(n)}`);
}

const SQL = new Map<string, string>();
const sqlFor = (stored: boolean, unstored: boolean): { name: string; text: string } => {
  const name = `tl_record_batch_${stored ? 's' : ''}${unstored ? 'u' : ''}`;
  let text = SQL.get(name);
  if (text === undefined) SQL.set(name, (text = recordSql(stored, unstored)));
  return { name, text };
};

/** A handed-off delivery's update in the batch; `k`: its attempt may list it, delivered, should it have no row. */
interface Unstored { u: DeliveryUpdate; r: number; error: string; k: boolean }

const keyOf = (u: DeliveryUpdate): string => `${u.row!.eventSeq}#${partKey(u.row!.destinationId, u.row!.part)}`;

/** The columns of `items` as arrays, one per getter. */
const columns = <T>(items: readonly T[], ...get: ((t: T) => unknown)[]): unknown[][] => get.map((g) => items.map(g));

/** Whether a record may list deliveries on its attempt (it delivered handed-off ones by their first attempt). */
export const mayList = (rec: AttemptRecord): boolean =>
  rec.http !== null && rec.updates.some((u) => u.row !== undefined && u.status === 'delivered' && u.attempts === 1);

/** Records `records` on `c` (inside the caller's transaction; with the shared listing locks when any mayList: listingLocks). */
export async function recordAttemptsOn(c: pg.PoolClient, records: readonly AttemptRecord[]): Promise<RecordResult[]> {
  const stored: { u: DeliveryUpdate; r: number; first: boolean; error: string }[] = [];
  const unstored: Unstored[] = [];
  const storedIds = new Set<number>();
  const keys = new Set<string>();
  records.forEach((rec, r) => {
    const firstDelivered: Unstored[] = [];
    for (const u of rec.updates) {
      const error = u.message ?? rec.message;
      if (u.row === undefined) {
        stored.push({ u, r: r + 1, first: !storedIds.has(u.id), error });
        storedIds.add(u.id);
      } else if (!keys.has(keyOf(u))) {
        // One write per key in a batch (the first), as one record's insert made the row the next would find.
        keys.add(keyOf(u));
        const s: Unstored = { u, r: r + 1, error, k: false };
        unstored.push(s);
        if (rec.http !== null && u.status === 'delivered' && u.attempts === 1) firstDelivered.push(s);
      }
    }
    // Those its attempt may list (the statement lists the ones without a row: a subset, so within the bounds too).
    if (firstDelivered.length > 0) keepDelivered(firstDelivered.map((s) => [s.u.row!.eventSeq, s.u.row!.part])).keep.forEach((k, i) => (firstDelivered[i].k = k));
  });
  // Destinations with successes only: their last success, in one upsert; the others record their health in order below.
  const failing = new Set(records.filter((rec) => rec.http !== null && rec.http.outcome !== 'success').map((rec) => rec.destinationId));
  const lastOk = new Map<string, number>();
  for (const rec of records) if (rec.http?.outcome === 'success' && !failing.has(rec.destinationId)) lastOk.set(rec.destinationId, rec.at);
  const destinations = [...new Set(records.map((rec) => rec.destinationId))];
  const { rows } = await c.query<{ kind: string; id: number; event_seq: number; destination_id: string; part: number }>({
    ...sqlFor(stored.length > 0, unstored.length > 0),
    values: [
      ...columns(records, (x) => x.claimId, (x) => x.at, (x) => x.http !== null, (x) => x.http?.statusCode ?? null, (x) => x.destinationId,
        (x) => (x.http === null ? null : Math.round(x.http.latencyMs)), (x) => truncateBytes(x.http?.responseBody ?? null, MAX_RESPONSE_BYTES),
        (x) => x.http?.errorClass ?? null, (x) => x.http?.outcome ?? null, (x) => x.message, (x) => x.updates.length,
        (x) => encodeRequest(x.http?.request)),
      ...(stored.length === 0 ? [] : columns(stored, (s) => s.u.id, (s) => s.u.status, (s) => s.u.attempts, (s) => s.u.nextAttemptAt, (s) => s.error, (s) => s.r, (s) => s.first)),
      ...(unstored.length === 0 ? [] : [...columns(unstored, (s) => s.u.row!.eventSeq, (s) => s.u.row!.scriptId, (s) => s.u.row!.destinationId, (s) => s.u.row!.destinationType,
        (s) => s.u.row!.eventId, (s) => s.u.row!.part, (s) => s.u.row!.receivedAt,
        (s) => (s.u.status === 'delivered' ? null : JSON.stringify(s.u.row!.item)), (s) => s.u.status, (s) => s.u.attempts,
        (s) => s.u.nextAttemptAt, (s) => s.error, (s) => s.r, (s) => s.k)]),
      [...lastOk.keys()], [...lastOk.values()], destinations,
    ],
  });
  const done = new Set<number>();
  const inserted = new Set<string>();
  let paused = new Set<string>();
  for (const row of rows) {
    if (row.kind === 'stored') done.add(Number(row.id));
    else if (row.kind === 'inserted' || row.kind === 'listed') inserted.add(`${row.event_seq}#${partKey(row.destination_id, row.part)}`);
    else paused.add(row.destination_id);
  }
  if (failing.size > 0) {
    // In order per failing destination; of a run of successes only the last is written (each overwrites the one before).
    const okRun = new Map<string, AttemptRecord>();
    for (const rec of records) {
      if (rec.http === null || !failing.has(rec.destinationId)) continue;
      if (rec.http.outcome === 'success') {
        okRun.set(rec.destinationId, rec);
        continue;
      }
      const ok = okRun.get(rec.destinationId);
      if (ok !== undefined) await recordHealth(c, ok);
      okRun.delete(rec.destinationId);
      await recordHealth(c, rec);
    }
    for (const ok of okRun.values()) await recordHealth(c, ok);
    // Whether each destination is paused, as the transaction leaves it.
    const { rows: h } = await c.query<{ destination_id: string }>(
      'SELECT destination_id FROM destination_health WHERE destination_id = ANY($1::text[]) AND paused_at IS NOT NULL', [destinations]);
    paused = new Set(h.map((r) => r.destination_id));
  }
  const firstStored = new Set(stored.filter((s) => s.first).map((s) => s.u));
  const firstUnstored = new Set(unstored.map((s) => s.u));
  return records.map((rec) => ({
    applied: rec.updates.filter((u) => (u.row === undefined ? firstStored.has(u) && done.has(u.id) : firstUnstored.has(u) && inserted.has(keyOf(u)))).map((u) => u.id),
    paused: paused.has(rec.destinationId),
  }));
}

/** A record's destination health, in order: a success clears failing_since, a failure sets it and may pause the destination. */
async function recordHealth(c: pg.PoolClient, rec: AttemptRecord): Promise<void> {
  if (rec.http!.outcome === 'success') {
    await c.query(`INSERT INTO destination_health (destination_id, last_success_at) VALUES ($1, $2)
      ON CONFLICT (destination_id) DO UPDATE SET last_success_at = excluded.last_success_at, failing_since = NULL`, [rec.destinationId, rec.at]);
    return;
  }
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
