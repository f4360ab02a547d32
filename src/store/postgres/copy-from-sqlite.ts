// `tracklane migrate-store`: copies a SQLite store into a PostgreSQL database in one
// transaction, schema included, so the target ends with all of it or with nothing. Tables
// and columns are read from the two schemas, not listed here: a column a later migration
// adds to both stores is copied as it is, and one with no place on the PostgreSQL side
// stops the copy instead of being dropped.
import type Database from 'better-sqlite3';
import pg from 'pg';
import { existsSync } from 'node:fs';
import { openConnection } from '../sqlite/connection.ts';
import { migrate as migrateSqlite } from '../sqlite/migrations.ts';
import { migrateInTransaction, PG_SCHEMA_VERSION } from './migrations.ts';

/** A refusal or failure worded for the operator; the target is as it was before. */
export class StoreCopyError extends Error {
  override name = 'StoreCopyError';
}

export interface StoreCopyOptions {
  /** The SQLite database file. */
  sqliteFile: string;
  /** postgres://… of the target. */
  url: string;
  /** Replace what the target's tracklane tables hold (emptied in the same transaction). */
  force?: boolean;
}

export interface StoreCopyResult {
  /** Rows copied per table, in the order they were copied. */
  tables: Record<string, number>;
  /** Rows the target held before, per table, that --force replaced ({} when it held none). */
  replaced: Record<string, number>;
  /** The target's PostgreSQL schema version. */
  schema_version: number;
}

/** Rows per INSERT: a statement stays far below PostgreSQL's 65,535 parameters. */
const BATCH_ROWS = 500;

/** A lease taken by the stopped SQLite server means nothing on PostgreSQL: the work is free to claim at once. */
const LEASE_COLUMNS = new Set(['lease_owner', 'lease_until']);

/**
 * Columns only the PostgreSQL side has, written NULL for the copied rows instead of their
 * default: events.fan_xid marks an event the fan-out reads after its cursor (fan-out-cursor.ts);
 * the copied events were fanned out in SQLite, or are in its dispatch_queue, which is copied.
 */
const NULL_ON_COPY: Record<string, string> = { events: 'fan_xid' };

/**
 * SQLite tables PostgreSQL keeps in another shape, not copied: fanout_cursors (SQLite's one
 * cursor, by seq; PostgreSQL's are per partition and ordered by transaction id, and copied
 * events carry none). The accepted events after SQLite's cursor are queued instead
 * (queueAfterCursor), so nothing acknowledged waits for a cursor that never reads it.
 */
const NOT_COPIED = new Set(['fanout_cursors']);

/** The longest wait for a lock held by someone else on the target (an instance running on it). */
const LOCK_TIMEOUT = '10s';

const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;

export async function copySqliteToPostgres(opts: StoreCopyOptions): Promise<StoreCopyResult> {
  if (!existsSync(opts.sqliteFile)) throw new StoreCopyError(`no SQLite store at ${opts.sqliteFile}`);
  const db = openConnection(opts.sqliteFile);
  const client = new pg.Client({ connectionString: opts.url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => undefined); // a dropped connection fails the next query, which reports it
  let step = 'connecting to the target';
  try {
    migrateSqlite(db); // the source at this build's schema, as the server would open it
    await client.connect();
    // One read transaction: every table is read from the same snapshot.
    db.exec('BEGIN');
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    step = 'creating the schema';
    await client.query('BEGIN');
    await client.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
    await migrateInTransaction(client);
    step = 'comparing the schemas';
    const tables = copyOrder(db);
    const types = await targetColumns(client);
    for (const t of tables) checkTable(db, t, types);
    step = 'checking that the target is empty';
    const replaced = await existingRows(client, tables);
    if (Object.keys(replaced).length > 0) {
      const held = Object.entries(replaced).map(([t, n]) => `${t} ${n}`).join(', ');
      if (!opts.force) throw new StoreCopyError(`the target already holds tracklane data (rows: ${held}); nothing was copied. --force replaces it`);
      await client.query(`TRUNCATE ${tables.map(ident).join(', ')} RESTART IDENTITY`);
    }
    const copied: Record<string, number> = {};
    for (const t of tables) {
      step = `copying ${t}`;
      copied[t] = await copyTable(db, client, t, types.get(t)!);
    }
    step = 'queueing the events SQLite had not fanned out';
    copied.dispatch_queue = (copied.dispatch_queue ?? 0) + await queueAfterCursor(db, client);
    step = 'setting the id sequences';
    await advanceSequences(db, client, tables);
    step = 'committing';
    await client.query('COMMIT');
    return { tables: copied, replaced, schema_version: PG_SCHEMA_VERSION };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    if (err instanceof StoreCopyError) throw err;
    throw new StoreCopyError(`${step} failed, nothing was copied: ${(err as Error).message}`);
  } finally {
    if (db.inTransaction) db.exec('ROLLBACK');
    db.close();
    await client.end().catch(() => undefined);
  }
}

/** The source's tables, each after the tables its foreign keys point to. */
function copyOrder(db: Database.Database): string[] {
  const names = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name`)
    .pluck().all() as string[]);
  const ordered: string[] = [];
  const visit = (t: string, path: string[]) => {
    if (ordered.includes(t)) return;
    if (path.includes(t)) throw new StoreCopyError(`the foreign keys of ${path.join(' → ')} form a cycle`);
    const parents = db.pragma(`foreign_key_list(${ident(t)})`) as { table: string }[];
    for (const p of parents) if (p.table !== t) visit(p.table, [...path, t]);
    ordered.push(t);
  };
  for (const t of names) if (!NOT_COPIED.has(t)) visit(t, []);
  return ordered;
}

/**
 * Queue rows on the target for the accepted events after the source's fan-out cursor that have
 * none (those SQLite would have read from its cursor; its open range is among them, fanned out
 * again with what it settled, as after any stop). Returns how many.
 */
async function queueAfterCursor(db: Database.Database, client: pg.Client): Promise<number> {
  const hasCursor = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'fanout_cursors'`).get() !== undefined;
  if (!hasCursor) return 0;
  const cursor = (db.prepare('SELECT cursor_seq FROM fanout_cursors WHERE part = 0').pluck().get() as number | undefined) ?? 0;
  const seqs = db.prepare(`SELECT seq FROM events e WHERE seq > ? AND status = 'accepted'
    AND NOT EXISTS (SELECT 1 FROM dispatch_queue q WHERE q.event_seq = e.seq) ORDER BY seq`).pluck().all(cursor) as number[];
  let queued = 0;
  for (let at = 0; at < seqs.length; at += BATCH_ROWS) {
    const { rowCount } = await client.query('INSERT INTO dispatch_queue (event_seq) SELECT unnest($1::bigint[]) ON CONFLICT (event_seq) DO NOTHING',
      [seqs.slice(at, at + BATCH_ROWS)]);
    queued += rowCount ?? 0;
  }
  return queued;
}

/** Every column of the target's tables: table → column → data type. */
async function targetColumns(client: pg.Client): Promise<Map<string, Map<string, string>>> {
  const { rows } = await client.query<{ t: string; c: string; type: string }>(
    `SELECT table_name AS t, column_name AS c, data_type AS type FROM information_schema.columns WHERE table_schema = current_schema()`);
  const out = new Map<string, Map<string, string>>();
  for (const r of rows) {
    if (!out.has(r.t)) out.set(r.t, new Map());
    out.get(r.t)!.set(r.c, r.type);
  }
  return out;
}

const sourceColumns = (db: Database.Database, table: string): string[] =>
  (db.pragma(`table_info(${ident(table)})`) as { name: string }[]).map((c) => c.name);

/** Refuses a table or column the PostgreSQL schema has no place for (the two schemas differ). */
function checkTable(db: Database.Database, table: string, types: Map<string, Map<string, string>>): void {
  const target = types.get(table);
  if (!target) throw new StoreCopyError(`table ${table} has no counterpart in the PostgreSQL schema (version ${PG_SCHEMA_VERSION}); nothing was copied`);
  const missing = sourceColumns(db, table).filter((c) => !target.has(c));
  if (missing.length > 0) throw new StoreCopyError(`${table}.${missing.join(', ')} has no counterpart in the PostgreSQL schema; nothing was copied`);
}

/** Row counts of the tables to fill that are not empty. */
async function existingRows(client: pg.Client, tables: readonly string[]): Promise<Record<string, number>> {
  const held: Record<string, number> = {};
  for (const t of tables) {
    const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${ident(t)}`);
    if (rows[0].n > 0) held[t] = rows[0].n;
  }
  return held;
}

async function copyTable(db: Database.Database, client: pg.Client, table: string, types: Map<string, string>): Promise<number> {
  const source = sourceColumns(db, table);
  const extra = NULL_ON_COPY[table];
  const cols = extra !== undefined && types.has(extra) && !source.includes(extra) ? [...source, extra] : source;
  const convert = cols.map((c): ((v: unknown) => unknown) => {
    if (LEASE_COLUMNS.has(c) || c === extra) return () => null;
    if (types.get(c) === 'boolean') return (v) => (v === null ? null : v !== 0);
    return (v) => v;
  });
  const insert = async (batch: unknown[][]) => {
    const values: unknown[] = [];
    const tuples = batch.map((row) => `(${row.map((v, i) => `$${values.push(convert[i](v))}`).join(', ')})`);
    await client.query(`INSERT INTO ${ident(table)} (${cols.map(ident).join(', ')}) VALUES ${tuples.join(', ')}`, values);
  };
  const rows = db.prepare(`SELECT ${[...source.map(ident), ...cols.slice(source.length).map(() => 'NULL')].join(', ')} FROM ${ident(table)}`).raw();
  let batch: unknown[][] = [];
  let count = 0;
  for (const row of rows.iterate() as IterableIterator<unknown[]>) {
    batch.push(row);
    count++;
    if (batch.length === BATCH_ROWS) {
      await insert(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await insert(batch);
  return count;
}

/**
 * Moves each serial column's sequence past the copied ids, and past the ids SQLite's
 * AUTOINCREMENT has handed out (a rule version number is never issued twice).
 */
async function advanceSequences(db: Database.Database, client: pg.Client, tables: readonly string[]): Promise<void> {
  const issued = new Map<string, number>();
  const hasSequences = db.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'`).get() !== undefined;
  if (hasSequences) {
    for (const r of db.prepare('SELECT name, seq FROM sqlite_sequence').all() as { name: string; seq: number }[]) issued.set(r.name, r.seq);
  }
  const { rows } = await client.query<{ t: string; c: string; seq: string }>(
    `SELECT table_name AS t, column_name AS c, pg_get_serial_sequence(quote_ident(table_name), column_name) AS seq
     FROM information_schema.columns WHERE table_schema = current_schema() AND column_default LIKE 'nextval(%'`);
  for (const r of rows) {
    if (!tables.includes(r.t) || r.seq === null) continue;
    const { rows: m } = await client.query<{ max: string | null }>(`SELECT max(${ident(r.c)})::text AS max FROM ${ident(r.t)}`);
    const last = Math.max(Number(m[0].max ?? 0), issued.get(r.t) ?? 0);
    if (last > 0) await client.query('SELECT setval($1, $2, true)', [r.seq, last]);
    else await client.query('SELECT setval($1, 1, false)', [r.seq]);
  }
}
