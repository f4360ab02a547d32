// PostgreSQL: the deliveries delivered by their first attempt without a row of their own, read
// from the attempts that list them (`delivered`: [event_seq, part] pairs, a replayed one null;
// docs/delivered-without-row.md). delivery-queries.ts merges them with the rows: listing,
// attempts, stats, replay and its count, and the purge's count. Ids are derived from the
// attempt and the pair's position (derivedDeliveryId), so every one is above every row id.
import type pg from 'pg';
import type { DeliveryFilter, ReplayFilter } from '../delivery-contract.ts';
import { toAttemptView, toDerivedView, type AttemptRow, type DerivedRow } from '../delivery-rows.ts';
import { DELIVERED_SEQ_SPAN, DERIVED_ID_BASE, PAIRS_PER_ATTEMPT, decodeDeliveryId } from '../delivery-views.ts';

/** What the derived ones are filtered by: a listing's or a replay's filter. */
interface PairFilter {
  id?: number; scriptId?: string; destinationId?: string; eventId?: string; eventRowId?: string; since?: number;
}

/** Each listed pair (p.v, p.o its position from 1) of the attempts `a`, replayed ones aside. */
const PAIRS = `delivery_attempts a CROSS JOIN LATERAL jsonb_array_elements(a.delivered::jsonb) WITH ORDINALITY AS p(v, o)`;
const LISTED = `a.delivered IS NOT NULL AND p.v <> 'null'::jsonb`;

/**
 * The attempts that delivered the events matching `events` (a condition on events), found through
 * each destination of the event's account by delivery_attempts_delivered_range (an attempt lists seqs
 * at most DELIVERED_SEQ_SPAN below its last), and the pairs of those events. OFFSET 0 keeps the
 * lateral look-up a scan per destination and event, with the seq range in its index condition
 * (flattened, the planner read every listing attempt of the destination and filtered).
 */
const ofEvents = (events: string): string => `a.id IN (SELECT x.id FROM events ev JOIN destinations dd ON dd.script_id = ev.script_id
    CROSS JOIN LATERAL (SELECT id FROM delivery_attempts WHERE destination_id = dd.id AND delivered IS NOT NULL
      AND last_seq >= ev.seq AND last_seq <= ev.seq + ${DELIVERED_SEQ_SPAN} AND first_seq <= ev.seq OFFSET 0) x
    WHERE ev.${events})
  AND (p.v->>0)::bigint IN (SELECT seq FROM events WHERE ${events})`;

/**
 * The conditions on `a` and `p` for `f`, its values appended to `args`; null when no derived
 * delivery can match (a row id asked for).
 */
function pairConditions(f: PairFilter, args: unknown[]): string[] | null {
  const parts = [LISTED];
  const add = (sql: (n: number) => string, value: unknown) => {
    args.push(value);
    parts.push(sql(args.length));
  };
  if (f.id !== undefined) {
    const d = decodeDeliveryId(f.id);
    if (d === null) return null;
    add((n) => `a.id = $${n}`, d.attemptId);
    add((n) => `p.o = $${n}::int + 1`, d.index);
  }
  if (f.scriptId !== undefined) add((n) => `a.script_id = $${n}`, f.scriptId);
  if (f.destinationId !== undefined) add((n) => `a.destination_id = $${n}`, f.destinationId);
  if (f.eventId !== undefined) add((n) => ofEvents(`event_id = $${n}`), f.eventId);
  if (f.eventRowId !== undefined) add((n) => ofEvents(`id = $${n}`), f.eventRowId);
  if (f.since !== undefined) add((n) => `a.attempted_at >= $${n}`, f.since);
  return parts;
}

/** The derived ones `f` lists (status absent or delivered; beforeId absent or a derived id), newest first, up to `limit`. */
export async function listDerived(pool: pg.Pool, f: DeliveryFilter, limit: number) {
  if ((f.status !== undefined && f.status !== 'delivered') || (f.beforeId !== undefined && f.beforeId < DERIVED_ID_BASE)) return [];
  const args: unknown[] = [];
  const cond = pairConditions(f, args);
  if (cond === null) return [];
  if (f.beforeId !== undefined) {
    const before = f.beforeId - DERIVED_ID_BASE;
    args.push(Math.floor(before / PAIRS_PER_ATTEMPT), before);
    cond.push(`a.id <= $${args.length - 1}`, `a.id * ${PAIRS_PER_ATTEMPT} + p.o - 1 < $${args.length}`);
  }
  args.push(limit);
  const { rows } = await pool.query<DerivedRow>(`SELECT a.id AS attempt_id, p.o - 1 AS idx, (p.v->>0)::bigint AS event_seq, (p.v->>1)::int AS part,
      a.script_id, a.destination_id, dst.type AS destination_type, e.event_id, e.received_at, a.attempted_at, a.status_code,
      (h.paused_at IS NOT NULL) AS paused
    FROM ${PAIRS} LEFT JOIN destinations dst ON dst.id = a.destination_id LEFT JOIN events e ON e.seq = (p.v->>0)::bigint
      LEFT JOIN destination_health h ON h.destination_id = a.destination_id
    WHERE ${cond.join(' AND ')} ORDER BY a.id DESC, p.o DESC LIMIT $${args.length}`, args);
  return rows.map(toDerivedView);
}

/** A derived id's attempt (none when the pair was replayed or purged); null for a row id. */
export async function derivedAttempts(pool: pg.Pool, id: number) {
  const d = decodeDeliveryId(id);
  if (d === null) return null;
  const { rows } = await pool.query<AttemptRow>(`SELECT a.* FROM delivery_attempts a
    WHERE a.id = $1 AND a.delivered IS NOT NULL AND coalesce(a.delivered::jsonb -> $2::int, 'null'::jsonb) <> 'null'::jsonb`, [d.attemptId, d.index]);
  return rows.map(toAttemptView);
}

/** Delivered counts per destination of the derived ones, as rows of the stats' counts query ($1: the account, when `scoped`). */
export const derivedCounts = (scoped: boolean): string => `SELECT a.destination_id, 'delivered' AS status, count(*)::int AS n,
    NULL::bigint AS oldest, NULL::bigint AS next_due
  FROM ${PAIRS} WHERE ${LISTED}${scoped ? ' AND a.script_id = $1' : ''} GROUP BY a.destination_id`;

/** The derived ones a replay filter matches (delivered among its statuses), replayable: destination not removed, event there. */
function replayablePairs(f: ReplayFilter, args: unknown[]): string | null {
  if (!f.statuses.includes('delivered')) return null;
  const cond = pairConditions({ id: f.deliveryId, scriptId: f.scriptId, destinationId: f.destinationId, eventId: f.eventId, since: f.since }, args);
  if (cond === null) return null;
  return `FROM ${PAIRS} JOIN destinations dst ON dst.id = a.destination_id AND dst.removed_at IS NULL JOIN events e ON e.seq = (p.v->>0)::bigint
    WHERE ${cond.join(' AND ')}`;
}

/** How many derived ones `f` would replay. */
export async function countReplayablePairs(pool: pg.Pool, f: ReplayFilter): Promise<number> {
  const args: unknown[] = [];
  const from = replayablePairs(f, args);
  if (from === null) return 0;
  return (await pool.query<{ n: number }>(`SELECT count(*)::int AS n ${from}`, args)).rows[0].n;
}

/**
 * Replays up to `limit` (null: all) derived ones `f` matches, oldest first, on `c` (in the
 * caller's transaction): each gets a pending row without item, due at `now`, that keeps its
 * attempt (attempt_id), and its pair in the attempt becomes null. Returns how many.
 */
export async function replayPairs(c: pg.PoolClient, f: ReplayFilter, now: number, limit: number | null): Promise<number> {
  const args: unknown[] = [now];
  const from = replayablePairs(f, args);
  if (from === null || limit === 0) return 0;
  const { rows } = await c.query<{ n: number }>(`WITH picked AS MATERIALIZED (
      SELECT a.id AS attempt_id, (p.o - 1)::int AS idx, (p.v->>0)::bigint AS s, (p.v->>1)::int AS part, a.script_id, a.destination_id,
        dst.type, e.event_id, e.received_at, a.attempted_at
      ${from} ORDER BY a.id, p.o ${limit === null ? '' : `LIMIT ${limit}`} FOR UPDATE OF a),
    ins AS (INSERT INTO deliveries (event_seq, script_id, destination_id, destination_type, event_id, part, received_at, status,
        attempts, next_attempt_at, created_at, updated_at, attempt_id)
      SELECT s, script_id, destination_id, type, event_id, part, received_at, 'pending', 0, $1, attempted_at, $1, attempt_id FROM picked
      ON CONFLICT (event_seq, destination_id, part) DO NOTHING),
    nulled AS (UPDATE delivery_attempts a SET delivered = (SELECT jsonb_agg(CASE WHEN q.o - 1 = ANY(g.idx) THEN 'null'::jsonb ELSE q.v END ORDER BY q.o)
        FROM jsonb_array_elements(a.delivered::jsonb) WITH ORDINALITY AS q(v, o))::text
      FROM (SELECT attempt_id, array_agg(idx) AS idx FROM picked GROUP BY attempt_id) g WHERE a.id = g.attempt_id)
    SELECT count(*)::int AS n FROM picked`, args);
  return rows[0].n;
}

/**
 * Deletes up to `chunk` attempts with ids below `edge`; returns how many, and how many derived
 * deliveries went with them (their listed pairs).
 */
export async function purgeAttemptChunk(pool: pg.Pool, edge: number, chunk: number): Promise<{ attempts: number; deliveries: number }> {
  const { rows } = await pool.query<{ n: number; pairs: number }>(`WITH gone AS (
      DELETE FROM delivery_attempts WHERE id IN (SELECT id FROM delivery_attempts WHERE id < $1 LIMIT $2) RETURNING delivered)
    SELECT count(*)::int AS n, coalesce(sum((SELECT count(*) FROM jsonb_array_elements(delivered::jsonb) AS q(v) WHERE q.v <> 'null'::jsonb))
      FILTER (WHERE delivered IS NOT NULL), 0)::int AS pairs FROM gone`, [edge, chunk]);
  return { attempts: rows[0].n, deliveries: rows[0].pairs };
}

/**
 * Whether an attempt to destination `d` lists the pair (`s`, `p`) (SQL expressions): its
 * destination's short range of delivery_attempts_delivered_range (first_seq tested in the index).
 */
export const listedPair = (d: string, s: string, p: string): string => `EXISTS (SELECT 1 FROM delivery_attempts l
    WHERE l.destination_id = ${d} AND l.delivered IS NOT NULL AND l.last_seq >= ${s} AND l.last_seq <= ${s} + ${DELIVERED_SEQ_SPAN} AND l.first_seq <= ${s}
      AND EXISTS (SELECT 1 FROM jsonb_array_elements(l.delivered::jsonb) AS j(pair) WHERE (j.pair->>0)::bigint = ${s} AND (j.pair->>1)::int = ${p}))`;

/** Advisory lock key space of the listing locks ('tldl'). */
const LISTING_LOCK = 0x74646c6c;

/** A destination id as a lock key: FNV-1a, 32 bits, signed. */
function lockKey(destinationId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < destinationId.length; i++) h = Math.imul(h ^ destinationId.charCodeAt(i), 0x01000193);
  return h | 0;
}

/**
 * The statement taking the listing locks of `destinationIds` for the transaction, in key order:
 * shared by records that may list deliveries, exclusive by a store of handed-off rows. A record
 * checks for rows and a store for listings each in its snapshot; taken before either, the locks
 * make one see what the other committed (else a row stored in flight while its record listed it
 * would be both: a pending row, sent again).
 */
export function listingLocks(destinationIds: Iterable<string>, mode: 'shared' | 'exclusive'): string {
  const keys = [...new Set([...destinationIds].map(lockKey))].sort((a, b) => a - b);
  const fn = mode === 'shared' ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
  return `SELECT ${keys.map((k) => `${fn}(${LISTING_LOCK}, ${k})`).join(', ')}`;
}

/** The condition keeping an event `e` an attempt still lists (as a delivered row kept it): per destination of its account. */
export const listedByAttempt = `EXISTS (SELECT 1 FROM destinations dd CROSS JOIN LATERAL (SELECT delivered FROM delivery_attempts
    WHERE destination_id = dd.id AND delivered IS NOT NULL AND last_seq >= e.seq AND last_seq <= e.seq + ${DELIVERED_SEQ_SPAN} AND first_seq <= e.seq
    OFFSET 0) a
  WHERE dd.script_id = e.script_id AND EXISTS (SELECT 1 FROM jsonb_array_elements(a.delivered::jsonb) AS q(v) WHERE (q.v->>0)::bigint = e.seq))`;
