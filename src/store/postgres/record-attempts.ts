// PostgreSQL attempt records, a whole group commit in one statement: every attempt of the
// batch, the updates of stored rows (fenced on each record's claim), the rows of handed-off
// deliveries (inserted, or updated where their lane stored them leased to the claim), their
// items, the links and the health of destinations that only succeeded. A batch with failures
// adds one statement: the failing destinations' health and pauses, as the records in order
// would leave them. A delivery keeps the first attempt
// recorded for it in its row (`attempt_id`); only the others (retries, a request that carried
// it while another claim held it) get a link row in delivery_attempt_items, so a delivery
// settled by its first request costs no link (PostgreSQL migration 12, SQLite 19). A handed-off
// delivery its first attempt delivered, with no row, gets none at all: the attempt lists it
// (`delivered`, PostgreSQL migration 13, SQLite 20; docs/delivered-without-row.md).
import type pg from 'pg';
import type { AttemptRecord, DeliveryUpdate, RecordResult } from '../delivery-contract.ts';
import { MAX_RESPONSE_BYTES, partKey, pauseOf } from '../delivery-contract.ts';
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
 * delivery_attempts_delivered_range: the destination's attempts listing seqs from this one on. A batch without stored rows (the usual: every delivery
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
  const paused = new Set<string>();
  for (const row of rows) {
    if (row.kind === 'stored') done.add(Number(row.id));
    else if (row.kind === 'inserted' || row.kind === 'listed') inserted.add(`${row.event_seq}#${partKey(row.destination_id, row.part)}`);
    else paused.add(row.destination_id);
  }
  if (failing.size > 0) {
    // The failing destinations' health in one statement, as the records in order would leave it; it returns whether each is paused now.
    const { rows: h } = await c.query<{ destination_id: string; paused: boolean }>({ name: 'tl_record_failing_health', text: FAILING_HEALTH,
      values: failingHealth(records, failing) });
    for (const r of h) {
      if (r.paused) paused.add(r.destination_id);
      else paused.delete(r.destination_id);
    }
  }
  const firstStored = new Set(stored.filter((s) => s.first).map((s) => s.u));
  const firstUnstored = new Set(unstored.map((s) => s.u));
  return records.map((rec) => ({
    applied: rec.updates.filter((u) => (u.row === undefined ? firstStored.has(u) && done.has(u.id) : firstUnstored.has(u) && inserted.has(keyOf(u)))).map((u) => u.id),
    paused: paused.has(rec.destinationId),
  }));
}

/**
 * The health of destinations a batch records a failure for, one row each ($1–$6) and the
 * failures that may pause them in order ($7–$12), written once per destination as the records
 * in order would leave it: last_success_at and last_failure_at the latest of each; failing_since
 * NULL after a final success, else the first failure after the last success (none in the
 * batch: the stored one, or the batch's first failure); paused by the first failure whose
 * failing_since (as the records up to it leave it) is at or before its bound, unless paused
 * already. The stored values are the row's as the upsert locks it. `fs`: a failure's
 * failing_since fixed by the batch (a success before it), else NULL (the stored one or `f.fs`).
 */
const FAILING_HEALTH = `WITH f AS (SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::boolean[], $5::bigint[], $6::bigint[]) AS f(d, ok, fail, had_ok, since, fs)),
    p AS (SELECT * FROM unnest($7::text[], $8::int[], $9::bigint[], $10::text[], $11::bigint[], $12::bigint[]) AS p(d, o, at, reason, bound, fs))
  INSERT INTO destination_health AS h (destination_id, last_success_at, last_failure_at, failing_since, paused_at, pause_reason, paused_destination_updated_at)
  SELECT f.d, f.ok, f.fail, f.since, x.at, x.reason, CASE WHEN x.at IS NOT NULL THEN (SELECT updated_at FROM destinations WHERE id = f.d) END
  FROM f LEFT JOIN LATERAL (SELECT p.at, p.reason FROM p WHERE p.d = f.d AND coalesce(p.fs, f.fs) <= p.bound ORDER BY p.o LIMIT 1) x ON true
  ON CONFLICT (destination_id) DO UPDATE SET
    last_success_at = coalesce(excluded.last_success_at, h.last_success_at),
    last_failure_at = excluded.last_failure_at,
    failing_since = CASE WHEN (SELECT had_ok FROM f WHERE f.d = excluded.destination_id) THEN excluded.failing_since ELSE coalesce(h.failing_since, excluded.failing_since) END,
    (paused_at, pause_reason, paused_destination_updated_at) = (SELECT coalesce(h.paused_at, x.at), CASE WHEN h.paused_at IS NOT NULL THEN h.pause_reason ELSE x.reason END,
        CASE WHEN h.paused_at IS NOT NULL THEN h.paused_destination_updated_at WHEN x.at IS NOT NULL THEN (SELECT updated_at FROM destinations WHERE id = excluded.destination_id) END
      FROM (SELECT NULL) AS one LEFT JOIN LATERAL (SELECT p.at, p.reason FROM p JOIN f ON f.d = p.d WHERE p.d = excluded.destination_id
        AND coalesce(p.fs, h.failing_since, f.fs) <= p.bound ORDER BY p.o LIMIT 1) x ON true)
  RETURNING destination_id, paused_at IS NOT NULL AS paused`;

/**
 * FAILING_HEALTH's values for the destinations in `failing`, from the records in order: per
 * destination its last success and failure, whether a success came in the batch, failing_since
 * as the batch leaves it (NULL after a final success; with no success in it, the first failure,
 * which the stored value overrides) and the first failure before any success; and each failure
 * that may pause it with its bound and, after a success in the batch, the failing_since it sees.
 */
function failingHealth(records: readonly AttemptRecord[], failing: ReadonlySet<string>): unknown[] {
  const per = new Map<string, { ok: number | null; fail: number | null; hadOk: boolean; since: number | null; first: number | null }>();
  const pauses: { d: string; at: number; reason: string; bound: number; fs: number | null }[] = [];
  for (const rec of records) {
    if (rec.http === null || !failing.has(rec.destinationId)) continue;
    let g = per.get(rec.destinationId);
    if (g === undefined) per.set(rec.destinationId, (g = { ok: null, fail: null, hadOk: false, since: null, first: null }));
    if (rec.http.outcome === 'success') {
      g.ok = rec.at;
      g.hadOk = true;
      g.since = null;
      continue;
    }
    g.fail = rec.at;
    g.since ??= rec.at;
    if (!g.hadOk) g.first ??= rec.at;
    const pause = pauseOf(rec);
    if (pause !== null) pauses.push({ d: rec.destinationId, at: rec.at, ...pause, fs: g.hadOk ? g.since : null });
  }
  const ds = [...per.keys()];
  const gs = [...per.values()];
  return [ds, gs.map((g) => g.ok), gs.map((g) => g.fail), gs.map((g) => g.hadOk), gs.map((g) => g.since),
    // The first failure before any success: failing_since up to the first success when none is stored.
    gs.map((g) => g.first),
    pauses.map((x) => x.d), pauses.map((_, i) => i), pauses.map((x) => x.at), pauses.map((x) => x.reason), pauses.map((x) => x.bound), pauses.map((x) => x.fs)];
}
