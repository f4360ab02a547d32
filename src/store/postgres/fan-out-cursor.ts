// PostgreSQL's fan-out cursor (docs/fan-out-cursor-postgres.md): accepted events are read from the
// events table after a persisted position per partition, instead of from a dispatch_queue row
// written per event at intake. Several instances share one database and sequence values are
// not assigned in commit order, so a position is an (xid, seq) pair: events carry the id of
// the transaction that stored them (fan_xid), and a claim reads only events whose transaction
// id is below the oldest one still running (pg_snapshot_xmin): every transaction below that
// horizon has ended, so no event can later appear behind a position already passed. A long
// writing transaction (one holding an xid) therefore delays the fan-out until it ends.
//
// This module is the bookkeeping: the row shapes, the SQL the claim, settle and release share,
// and the in-memory state of the partitions a store object holds (its open events, in key
// order), from which the cursor is moved. The transactions run in fan-out-claim.ts, fan-out-complete.ts and fan-out-takeover.ts.
import type pg from 'pg';

/** Partitions of the event log (index events_fan_out). */
export const FAN_PARTS = 8;
/**
 * Consecutive seqs per run of a partition: partition = (seq / FAN_RUN) % FAN_PARTS. Runs of a
 * batch's size or more keep what one claim reads contiguous in seq: with seq % 8, a batch of
 * one partition spanned 8 times its seqs, the send lanes' attempts listed overlapping seq
 * ranges, and recording each delivered pair read the listings of every attempt overlapping it
 * (docs/delivered-without-row.md), ~4 times the blocks of the attempt records.
 */
export const FAN_RUN = 256;

/** An event's partition, as the index events_fan_out is built on (alias: the events table's). */
export const fanPart = (alias: string): string => `((${alias}.seq / ${FAN_RUN}) % ${FAN_PARTS})`;
/** The partition of event `seq`. */
export const partOf = (seq: number): number => Math.floor(seq / FAN_RUN) % FAN_PARTS;

/** The accepted events the fan-out reads (the partial index's predicate, repeated so the planner uses it). */
export const FAN_EVENTS = (alias: string): string => `${alias}.status = 'accepted' AND ${alias}.fan_xid IS NOT NULL`;

/**
 * The horizon below which every transaction of this database has ended, as of the statement's
 * snapshot: the oldest transaction it sees running (pg_snapshot_xip) that is not shown running
 * in another database (pg_stat_activity), else the snapshot's xmax. Transaction ids are the
 * server's, so the snapshot's own xmin would also wait for every other database's writers. A
 * running transaction that cannot be placed (one that ended since, a prepared one, a session
 * the role may not see) counts as this database's: the horizon is only ever too low, never too high.
 */
export const HORIZON = `(SELECT coalesce((SELECT min(x) FROM pg_snapshot_xip(s.current) AS x
    WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.backend_xid = xid(x)
      AND a.datid <> (SELECT oid FROM pg_database WHERE datname = current_database()))), pg_snapshot_xmax(s.current))
  FROM (SELECT pg_current_snapshot() AS current) AS s)`;

/** A position in a partition: (transaction id, seq), ordered lexicographically. */
export interface Key {
  x: bigint;
  s: number;
}

export const cmpKey = (a: Key, b: Key): number => (a.x < b.x ? -1 : a.x > b.x ? 1 : a.s - b.s);
export const maxKey = (a: Key, b: Key): Key => (cmpKey(a, b) >= 0 ? a : b);
export const sameKey = (a: Key, b: Key): boolean => cmpKey(a, b) === 0;

/** A cursor row as read (xids as text: node-postgres has no parser for xid8). */
export interface CursorRow {
  part: number;
  lease_owner: string | null;
  lease_until: number | null;
  cx: string; cs: number;
  mx: string; ms: number;
  kx: string; ks: number;
  sx: string; ss: number;
}

/** The columns of a CursorRow, from fanout_cursors aliased `c`. */
export const CURSOR_COLUMNS = `c.part, c.lease_owner, c.lease_until, c.cursor_xid::text AS cx, c.cursor_seq AS cs, c.mapped_xid::text AS mx,
  c.mapped_seq AS ms, c.claimed_xid::text AS kx, c.claimed_seq AS ks, c.seen_xid::text AS sx, c.seen_seq AS ss`;

/** A partition's positions: `cursor` (all at or before it settled), `mapped`, `claimed`, `seen` (the highest ever claimed). */
export interface Positions {
  cursor: Key;
  mapped: Key;
  claimed: Key;
  seen: Key;
}

export const positionsOf = (r: CursorRow): Positions => ({
  cursor: { x: BigInt(r.cx), s: Number(r.cs) }, mapped: { x: BigInt(r.mx), s: Number(r.ms) },
  claimed: { x: BigInt(r.kx), s: Number(r.ks) }, seen: { x: BigInt(r.sx), s: Number(r.ss) },
});

/** An event a claim of this store object took from a partition, until it settles. */
export interface OpenEvent {
  key: Key;
  part: number;
  claimId: string;
  /** When its claim's lease ends: a completed event whose handoffs are not all recorded by then goes to dispatch_queue. */
  leaseUntil: number;
  /** Its fan-out committed (completeFanOut); it waits for its handed-off deliveries' rows. */
  completed: boolean;
  /** Settled, behind one still open: the cursor moves past it once those before it settle. */
  settled: boolean;
}

/** A partition this store object holds: its owner, positions and the events claimed after its cursor, in key order. */
export interface HeldPart {
  owner: string;
  pos: Positions;
  leaseUntil: number;
  /** The lease length its claims asked for: a write renews it by as much. */
  leaseMs: number;
  open: OpenEvent[];
}

/** Where a partition ends up after some of its open events settle: the cursor past the settled prefix, or released when none is open. */
export interface Settled {
  part: number;
  pos: Positions;
  open: OpenEvent[];
  released: boolean;
}

/** Settles `seqs` in `held` (a copy: applied once the transaction commits); `mapped`: the highest key a completion mapped. */
export function settle(part: number, held: HeldPart, seqs: ReadonlySet<number>, mapped: Key | null): Settled {
  const open = held.open.map((e) => (seqs.has(e.key.s) ? { ...e, settled: true } : e));
  // The cursor moves to the last settled event before the first one still open.
  let cursor = held.pos.cursor;
  let k = 0;
  for (; k < open.length && open[k].settled; k++) cursor = open[k].key;
  const rest = open.slice(k);
  if (rest.length === 0) cursor = held.pos.claimed;
  const pos = { ...held.pos, cursor, mapped: mapped === null ? held.pos.mapped : maxKey(held.pos.mapped, mapped) };
  return { part, pos, open: rest, released: rest.length === 0 };
}

/** A cursor row to write: its positions and lease (owner null: released). */
export interface CursorWrite {
  part: number;
  pos: Positions;
  owner: string | null;
  leaseUntil: number | null;
}

/** The columns of an UPDATE of cursor rows from unnest($1 … $11): part, the four positions, lease owner and until. */
export const cursorArrays = (rows: readonly CursorWrite[]): unknown[] => [
  rows.map((r) => r.part),
  rows.map((r) => r.pos.cursor.x.toString()), rows.map((r) => r.pos.cursor.s),
  rows.map((r) => r.pos.mapped.x.toString()), rows.map((r) => r.pos.mapped.s),
  rows.map((r) => r.pos.claimed.x.toString()), rows.map((r) => r.pos.claimed.s),
  rows.map((r) => r.pos.seen.x.toString()), rows.map((r) => r.pos.seen.s),
  rows.map((r) => r.owner), rows.map((r) => r.leaseUntil),
];

/**
 * Writes cursor rows ($1..$11 as cursorArrays) where `fence` holds ($12: the owner that must hold
 * the lease, or null: no fence, the caller locked them); returns the partitions written.
 */
export async function writeCursors(c: pg.ClientBase, rows: readonly CursorWrite[], fence: string | null): Promise<Set<number>> {
  if (rows.length === 0) return new Set();
  const { rows: done } = await c.query<{ part: number }>({ name: 'tl_write_cursors', text: `UPDATE fanout_cursors c SET
      cursor_xid = x.cx, cursor_seq = x.cs, mapped_xid = x.mx, mapped_seq = x.ms, claimed_xid = x.kx, claimed_seq = x.ks,
      seen_xid = x.sx, seen_seq = x.ss, lease_owner = x.o, lease_until = x.u
    FROM unnest($1::int[], $2::xid8[], $3::bigint[], $4::xid8[], $5::bigint[], $6::xid8[], $7::bigint[], $8::xid8[], $9::bigint[], $10::text[], $11::bigint[])
      AS x(p, cx, cs, mx, ms, kx, ks, sx, ss, o, u)
    WHERE c.part = x.p AND ($12::text IS NULL OR c.lease_owner = $12) RETURNING c.part`,
  values: [...cursorArrays(rows), fence] });
  return new Set(done.map((d) => d.part));
}

/**
 * Hands back the partitions the WHERE clause `which` ($1 its value) picks, locking them: the
 * events their holder claimed and did not settle go to dispatch_queue, those it was mapping
 * when it stopped (after `mapped`, up to `claimed`) counted as interrupted once (map_claims 1:
 * claimed alone, poison.ts), those it mapped (their handed-off deliveries not all recorded)
 * as not (map_claims 0: fanned out again with the rows they have); an event settled behind an
 * open one goes too, and finds its rows there. The partition then reads on after `claimed`.
 * (Read again from the cursor instead, an event moved to dispatch_queue would be read a second
 * time should its queue row be gone before the reading passed it.) Returns the partitions.
 */
export async function handBack(c: pg.ClientBase, which: string, values: unknown[], release: boolean): Promise<number> {
  const r = await c.query(`WITH h AS (SELECT c.part, c.cursor_xid, c.cursor_seq, c.mapped_xid, c.mapped_seq, c.claimed_xid, c.claimed_seq
        FROM fanout_cursors c WHERE ${which} FOR UPDATE),
      queued AS (INSERT INTO dispatch_queue (event_seq, map_claims)
        SELECT e.seq, CASE WHEN (e.fan_xid, e.seq) > (h.mapped_xid, h.mapped_seq) THEN 1 ELSE 0 END
        FROM h JOIN events e ON ${fanPart('e')} = h.part AND ${FAN_EVENTS('e')}
          AND (e.fan_xid, e.seq) > (h.cursor_xid, h.cursor_seq) AND (e.fan_xid, e.seq) <= (h.claimed_xid, h.claimed_seq)
        ON CONFLICT (event_seq) DO NOTHING)
    UPDATE fanout_cursors c SET cursor_xid = c.claimed_xid, cursor_seq = c.claimed_seq, mapped_xid = c.claimed_xid, mapped_seq = c.claimed_seq
      ${release ? ', lease_owner = NULL, lease_until = NULL' : ''}
    FROM h WHERE c.part = h.part`, values);
  return r.rowCount ?? 0;
}


/**
 * Puts back a partition's cursor row should it be missing (the table emptied by hand, as a
 * test resets a database): at the start, so every event stored since is read.
 */
export async function ensureCursors(pool: pg.Pool): Promise<void> {
  await pool.query(`INSERT INTO fanout_cursors SELECT p, '0', 0, '0', 0, '0', 0, '0', 0, NULL, NULL FROM generate_series(0, ${FAN_PARTS - 1}) AS p
    WHERE NOT EXISTS (SELECT 1 FROM fanout_cursors c WHERE c.part = p) ON CONFLICT (part) DO NOTHING`);
}
