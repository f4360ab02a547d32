// The SQL text of PostgreSQL's fan-out transactions (dispatch-queue.ts and the modules it
// composes): what a claim looks at, locks and reads, what a take-over moves to dispatch_queue,
// what a completion writes, and the backlog count. The cursor rows' own SQL (their columns,
// writes, hand-back, the horizon) is in fan-out-cursor.ts.
import { WORK_CHANNEL } from './notify.ts';
import { CURSOR_COLUMNS, FAN_EVENTS, HORIZON, fanPart } from './fan-out-cursor.ts';

/**
 * The deliveries of events $1 (seqs $2..$3, of accounts $5) an earlier fan-out settled: their rows,
 * and the pairs attempts list as delivered without one (delivery_attempts_delivered_range, for each
 * destination of those accounts: an attempt lists seqs at most $4 below its last), a replayed pair (null) aside.
 */
export const SETTLED = `SELECT event_seq, destination_id, part FROM deliveries WHERE event_seq = ANY($1::bigint[]) AND part IS NOT NULL
  UNION ALL
  SELECT (p.v->>0)::bigint, a.destination_id, (p.v->>1)::int FROM delivery_attempts a CROSS JOIN LATERAL jsonb_array_elements(a.delivered::jsonb) AS p(v)
  WHERE a.destination_id IN (SELECT id FROM destinations WHERE script_id = ANY($5::text[]))
    AND a.delivered IS NOT NULL AND a.last_seq >= $2 AND a.last_seq <= $3::bigint + $4 AND a.first_seq <= $3
    AND p.v <> 'null'::jsonb AND (p.v->>0)::bigint = ANY($1::bigint[])`;

/** Events of transactions at or after the horizon are not read yet: one still running may add events before them (fan-out-cursor.ts). */
const BELOW_HORIZON = `e.fan_xid < ${HORIZON}`;

/**
 * What a claim may do, in one query outside a transaction (an idle fan-out's look): whether
 * dispatch_queue has due rows, and each partition it may take (free, expired, or its owner's:
 * $2; $3 the partitions this store object holds for it) with the first event it could read
 * after its position (its head; none: nothing to read). Only the head: counting further read
 * every event of a backlog's partitions (not yet all-visible, so from the heap) on every claim.
 */
export const LOOK = `SELECT d.due, c.* FROM (SELECT EXISTS (SELECT 1 FROM dispatch_queue WHERE lease_until IS NULL OR lease_until <= $1 OR lease_owner = $4) AS due) d
  LEFT JOIN LATERAL (SELECT ${CURSOR_COLUMNS}, h.head FROM fanout_cursors c
    CROSS JOIN LATERAL (SELECT c.lease_owner IS NOT DISTINCT FROM $2 AND c.part = ANY($3::int[]) AS mine) m
    LEFT JOIN LATERAL (SELECT e.seq AS head FROM events e
      WHERE ${fanPart('e')} = c.part AND ${FAN_EVENTS('e')}
        AND (e.fan_xid, e.seq) > (CASE WHEN m.mine THEN c.claimed_xid ELSE c.cursor_xid END, CASE WHEN m.mine THEN c.claimed_seq ELSE c.cursor_seq END)
        AND ${BELOW_HORIZON}
      ORDER BY e.fan_xid, e.seq LIMIT 1) h ON true
    WHERE c.lease_owner IS NULL OR c.lease_until <= $1 OR c.lease_owner = $2) c ON true`;

/** The cursor rows of partitions $1 a claim of owner $3 may take at $2 (free, expired or its own), locked; one locked elsewhere is passed over. */
export const LOCK_CURSORS = `SELECT ${CURSOR_COLUMNS} FROM fanout_cursors c WHERE c.part = ANY($1::int[])
  AND (c.lease_owner IS NULL OR c.lease_until <= $2 OR c.lease_owner = $3) ORDER BY c.part FOR UPDATE SKIP LOCKED`;

/** Open events whose claim's lease lapsed, to dispatch_queue ($1 seqs, $2 claim ids, $3 lease ends, $4 map_claims); one queued already is left. */
export const QUEUE_LAPSED = `INSERT INTO dispatch_queue (event_seq, lease_owner, lease_until, map_claims)
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::int[]) ON CONFLICT (event_seq) DO NOTHING`;

/** Up to $3 dispatch_queue rows due at $2 (or leased to claim $1), oldest first, locked; one locked elsewhere is passed over. */
export const DUE_QUEUED = `SELECT event_seq, map_claims, lease_owner FROM dispatch_queue WHERE lease_until IS NULL OR lease_until <= $2 OR lease_owner = $1
  ORDER BY event_seq LIMIT $3 FOR UPDATE SKIP LOCKED`;

/**
 * Leases dispatch_queue rows of events $3 to claim $1 until $2, counting the claim (SET reads the
 * row as it was: a retake by the same claim adds no count), and reads their events.
 */
export const LEASE_QUEUED = `WITH leased AS (
    UPDATE dispatch_queue q SET lease_owner = $1, lease_until = $2,
      map_claims = q.map_claims + CASE WHEN q.lease_owner IS NOT DISTINCT FROM $1 THEN 0 ELSE 1 END
    WHERE q.event_seq = ANY($3::bigint[]) RETURNING q.event_seq, q.held_for)
  SELECT e.*, l.held_for AS queued_held_for FROM leased l JOIN events e ON e.seq = l.event_seq
  -- The events by their key as well: without it a batch of a few hundred was joined by reading all of events.
  WHERE e.seq = ANY($3::bigint[]) ORDER BY e.seq`;

/** The dispatch_queue rows leased to claim $1 whose event was purged: nothing left to deliver. */
export const DROP_PURGED = `DELETE FROM dispatch_queue q WHERE q.lease_owner = $1 AND NOT EXISTS (SELECT 1 FROM events e WHERE e.seq = q.event_seq)`;

/**
 * The events of partitions p (in the order given) after (x, s), in key order, $4 in all: the
 * first partition's, then the next one's while room is left. Each partition's are a prefix of
 * its events after its position (the nested loop emits each partition's ordered scan in turn).
 * An event in dispatch_queue is read too (`queued`: the position passes it, it is not claimed
 * from here): a NOT EXISTS in the scan made the planner read and sort a whole partition.
 */
export const READ = `SELECT e.*, e.fan_xid::text AS fx, EXISTS (SELECT 1 FROM dispatch_queue q WHERE q.event_seq = e.seq) AS queued
  FROM unnest($1::int[], $2::xid8[], $3::bigint[]) AS p(part, x, s)
  CROSS JOIN LATERAL (SELECT * FROM events e WHERE ${fanPart('e')} = p.part AND ${FAN_EVENTS('e')} AND (e.fan_xid, e.seq) > (p.x, p.s)
    AND ${BELOW_HORIZON} ORDER BY e.fan_xid, e.seq LIMIT $4) e LIMIT $4`;

/** Events $1 by seq, with their transaction id (the retaken ones). */
export const EVENTS_BY_SEQ = 'SELECT e.*, e.fan_xid::text AS fx FROM events e WHERE e.seq = ANY($1::bigint[])';

/**
 * Of the dispatch_queue rows leased to claim $3: those of events $1 leave the queue, those of
 * events $2 (they handed deliveries off) stay with their mapping counted finished; returns the seqs.
 */
export const UNQUEUE = `WITH gone AS (
    DELETE FROM dispatch_queue WHERE event_seq = ANY($1::bigint[]) AND lease_owner = $3 RETURNING event_seq),
  kept AS (UPDATE dispatch_queue SET map_claims = 0 WHERE event_seq = ANY($2::bigint[]) AND lease_owner = $3 RETURNING event_seq)
  SELECT event_seq FROM gone UNION ALL SELECT event_seq FROM kept`;

/**
 * Events $1 held for destinations $2 (JSON), leased to the hold's claim $3 until $4: a queued one
 * ($6 false) updated where claim $5 still leases it, one from a partition ($6 true) queued now; returns the seqs.
 */
export const HOLD = `WITH x AS (SELECT * FROM unnest($1::bigint[], $2::text[], $6::boolean[]) AS x(seq, owed, fresh)),
    upd AS (UPDATE dispatch_queue q SET held_for = x.owed, lease_owner = $3, lease_until = $4, map_claims = 0
      FROM x WHERE NOT x.fresh AND q.event_seq = x.seq AND q.lease_owner = $5 RETURNING q.event_seq),
    ins AS (INSERT INTO dispatch_queue (event_seq, held_for, lease_owner, lease_until, map_claims)
      SELECT seq, owed, $3, $4, 0 FROM x WHERE x.fresh
      ON CONFLICT (event_seq) DO UPDATE SET held_for = excluded.held_for, lease_owner = excluded.lease_owner,
        lease_until = excluded.lease_until, map_claims = 0 RETURNING event_seq)
  SELECT event_seq FROM upd UNION ALL SELECT event_seq FROM ins`;

/**
 * Inserts a fan-out's rows ($1..$12 column arrays, $13 now): a row an earlier fan-out of the
 * event stored is left as it is (its item too); only the pending rows inserted now are counted,
 * per destination. The items of the rows inserted go to delivery_items, keyed by the id each row
 * got (found again by its unique key).
 */
export const INSERT_DELIVERIES = `WITH u AS (
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::text[], $9::text[],
      $10::bigint[], $11::text[], $12::bigint[]) WITH ORDINALITY AS u(s, a, d, t, e, p, i, st, r, n, m, rc, o)),
  ins AS (
    INSERT INTO deliveries (event_seq, script_id, destination_id, destination_type, event_id, part, status,
      skip_reason, attempts, next_attempt_at, last_error, received_at, created_at, updated_at)
    SELECT s, a, d, t, e, p, st, r, 0, n, m, rc, $13, $13 FROM u ORDER BY o
    ON CONFLICT (event_seq, destination_id, part) DO NOTHING RETURNING id, event_seq, destination_id, part, status),
  items AS (
    INSERT INTO delivery_items (delivery_id, item)
    SELECT id, i FROM (SELECT DISTINCT ON (ins.id) ins.id, u.i FROM ins
      JOIN u ON u.s = ins.event_seq AND u.d = ins.destination_id AND u.p = ins.part ORDER BY ins.id, u.o) AS f
    WHERE i IS NOT NULL
    ON CONFLICT (delivery_id) DO UPDATE SET item = excluded.item)
  SELECT destination_id, count(*)::int AS n FROM ins WHERE status = 'pending' GROUP BY destination_id`;

/** Wakes the send lanes of every instance: new pending deliveries. */
export const NOTIFY_DELIVERIES = `NOTIFY ${WORK_CHANNEL}, 'deliveries'`;

/** The dispatch_queue rows of events $1 still leased to claim $2 leave it (finishEvents). */
export const FINISH_QUEUED = 'DELETE FROM dispatch_queue WHERE event_seq = ANY($1::bigint[]) AND lease_owner = $2';

/**
 * dispatch_queue's rows plus the accepted events after each partition's position, queued ones
 * aside: $1..$3 the partitions a store object holds and their claimed positions, the others' cursors.
 */
export const BACKLOG = `SELECT (SELECT count(*) FROM dispatch_queue)::int
  + (SELECT count(*) FROM fanout_cursors c LEFT JOIN unnest($1::int[], $2::xid8[], $3::bigint[]) AS o(part, x, s) ON o.part = c.part
    JOIN events e ON ${fanPart('e')} = c.part AND ${FAN_EVENTS('e')}
      AND (e.fan_xid, e.seq) > (coalesce(o.x, c.cursor_xid), coalesce(o.s, c.cursor_seq))
      AND NOT EXISTS (SELECT 1 FROM dispatch_queue q WHERE q.event_seq = e.seq))::int AS n`;

/** Owners holding a partition's lease. */
export const CURSOR_HOLDERS = 'SELECT DISTINCT lease_owner AS owner FROM fanout_cursors WHERE lease_owner IS NOT NULL';
