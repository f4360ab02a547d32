// `npm run bench:store [-- sqlite]`: what the store does and keeps per event. One instance
// (capped at BENCH_STORE_SHARE of a core when the cgroup cpu controller is there, as in
// bench:scale; 0: uncapped) takes BENCH_SECONDS (5) of endpoint-1 load from BENCH_STORE_CONNECTIONS
// (16) connections, four loopback destinations delivering, until every native event arrived.
// PostgreSQL (default): every statement the server ran for it from pg_stat_statements (the
// server needs `shared_preload_libraries = 'pg_stat_statements'`; without it only the sizes),
// per accepted event, then each table's and index's bytes per event after a VACUUM (what the
// rows hold once everything is delivered). SQLite: each table's and index's bytes in use per
// event (dbstat), the server stopped.
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import pg from 'pg';
import { rmSync } from 'node:fs';
import { loadConfig } from '../../src/config.ts';
import { sqliteFile } from '../../src/store/open-store.ts';
import { createTestDatabase, PG_ADMIN_URL, postgresAvailable } from '../helpers/postgres.ts';
import { cpuCaps, type CappedGroup } from './cpu-cap.ts';
import { watchPostgresCpu } from './pg-cpu.ts';
import { benchSetup, checkout, nativeEvents, SQLITE_OPEN_WORK_SQL, startServer, stop } from './payloads.ts';

const TYPES = ['ga4', 'meta-capi', 'tiktok', 'webhook'];
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_STORE_CONNECTIONS ?? 16);
const SHARE = Number(process.env.BENCH_STORE_SHARE ?? 0.25);
const mode = process.argv.includes('sqlite') ? 'sqlite' : 'postgres';

interface Sized { name: string; bytes: number }

/** PostgreSQL: each relation of the public schema (tables with their TOAST, indexes) in bytes. */
async function pgSizes(c: pg.Client): Promise<Sized[]> {
  const { rows } = await c.query<{ name: string; bytes: string }>(`SELECT c.relname AS name,
      CASE WHEN c.relkind = 'r' THEN pg_relation_size(c.oid) + coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0) ELSE pg_relation_size(c.oid) END AS bytes
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i')`);
  return rows.map((r) => ({ name: r.name, bytes: Number(r.bytes) }));
}

/** SQLite: bytes in use per table and index (dbstat: pages minus their unused bytes). */
function sqliteSizes(file: string): Sized[] {
  const db = new Database(file);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    return (db.prepare('SELECT name, sum(pgsize - unused) AS bytes FROM dbstat GROUP BY name').all() as Sized[]);
  } finally {
    db.close();
  }
}

const table = (before: Sized[], after: Sized[], events: number): string => {
  const was = new Map(before.map((s) => [s.name, s.bytes]));
  const rows = after.map((s) => ({ name: s.name, per: (s.bytes - (was.get(s.name) ?? 0)) / events })).filter((r) => Math.abs(r.per) >= 0.5)
    .sort((a, b) => b.per - a.per);
  const total = rows.reduce((n, r) => n + r.per, 0);
  return ['| relation | bytes per event |', '|---|---:|', ...rows.map((r) => `| ${r.name} | ${r.per.toFixed(0)} |`), `| **total** | **${total.toFixed(0)}** |`].join('\n');
};

async function main(): Promise<void> {
  if (mode === 'postgres' && !(await postgresAvailable())) {
    console.log(`bench:store skipped: PostgreSQL does not answer at ${PG_ADMIN_URL}.`);
    return;
  }
  const db = mode === 'postgres' ? await createTestDatabase() : null;
  if (db !== null) {
    // Planning time too, in this database's sessions only (the server's setting stays as it is).
    const c = new pg.Client({ connectionString: PG_ADMIN_URL });
    await c.connect();
    await c.query(`ALTER DATABASE ${db.name} SET pg_stat_statements.track_planning = on`).catch(() => undefined);
    await c.end();
  }
  const { dataDir, env, doubles, account } = await benchSetup('Store', TYPES, true);
  if (db !== null) {
    env.DATABASE_URL = db.url;
    // The account again, in the PostgreSQL database (benchSetup made it in SQLite).
    const { sideSetup, currentSide } = await import('./reference.ts');
    const [made] = await sideSetup<{ scriptId: string; accessToken: string }[]>(currentSide(), {
      task: 'accounts', env, accounts: [{ name: 'Store', doubles: Object.fromEntries([...doubles].map(([t, d]) => [t, d.url])), country: 'RO' }],
    });
    Object.assign(account, made);
  }
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  const inDb = db === null ? null : new pg.Client({ connectionString: db.url });
  let group: CappedGroup | null = null;
  const { child, port } = await startServer(env);
  child.stdout!.resume();
  try {
    const caps = SHARE > 0 ? cpuCaps(`tracklane-store-${process.pid}`) : null;
    if (caps !== null && !('unavailable' in caps)) {
      group = caps.create(`tracklane-store-${process.pid}-0`, SHARE);
      group.add(child.pid!);
    }
    let statements = false;
    let dbid = 0;
    if (inDb !== null) {
      await admin.connect();
      await inDb.connect();
      dbid = Number((await admin.query<{ oid: string }>('SELECT oid FROM pg_database WHERE datname = $1', [db!.name])).rows[0].oid);
      try {
        await admin.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
        await admin.query('SELECT pg_stat_statements_reset(0, $1, 0)', [dbid]);
        statements = true;
      } catch (e) {
        console.log(`pg_stat_statements not usable (${(e as Error).message}): sizes only.`);
      }
    }
    const pgCpu = inDb !== null ? await watchPostgresCpu(db!.name) : null;
    const before = inDb !== null ? await pgSizes(inDb) : sqliteSizes(sqliteFile(loadConfig(env)));
    let sequence = 0;
    const run = await autocannon({
      url: `http://127.0.0.1:${port}/webhooks/service/event?id=${account.scriptId}`, connections: CONNECTIONS, duration: SECONDS,
      requests: [{ method: 'POST', headers: { 'content-type': 'application/json', 'x-service-access-token': account.accessToken },
        setupRequest: (req) => ({ ...req, body: JSON.stringify(checkout(`store-${process.pid}-${++sequence}`)) }) }],
    });
    const accepted = run['2xx'];
    const expected = accepted * TYPES.length;
    const deadline = Date.now() + 180_000;
    const count = () => TYPES.reduce((n, t) => n + nativeEvents(t, doubles.get(t)!), 0);
    // Everything delivered: every native event arrived, and nothing is queued or pending in the store.
    const file = sqliteFile(loadConfig(env));
    const open = async (): Promise<number> => {
      const sql = "SELECT (SELECT count(*) FROM dispatch_queue) + (SELECT count(*) FROM deliveries WHERE status = 'pending') AS n";
      // PostgreSQL: the events after the fan-out's cursor too (fan-out-cursor.ts), as the store's backlog counts them.
      if (inDb !== null) return Number((await inDb.query<{ n: string }>(`${sql.replace(' AS n', '')} + (SELECT count(*) FROM fanout_cursors c
        JOIN events e ON (e.seq / 256) % 8 = c.part AND e.status = 'accepted' AND e.fan_xid IS NOT NULL AND (e.fan_xid, e.seq) > (c.cursor_xid, c.cursor_seq)) AS n`)).rows[0].n);
      const lite = new Database(file, { readonly: true });
      try {
        return (lite.prepare(SQLITE_OPEN_WORK_SQL).get() as { n: number }).n;
      } finally {
        lite.close();
      }
    };
    while ((count() < expected || (await open()) > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    const pgUsed = await pgCpu?.stop();
    console.log(`\n${mode}: ${accepted} events accepted in ${SECONDS} s (${CONNECTIONS} connections, instance ${group === null ? 'uncapped' : `capped at ${SHARE} core`}), ` +
      `${count()} native events of ${expected} (more: the requests in flight when the load stopped, which autocannon does not count, or events sent again) delivered to ${TYPES.join(', ')}, ${await open()} queued or pending.` +
      (pgUsed?.visible === true ? ` PostgreSQL's backends: ${((pgUsed.backends * 1e6) / accepted).toFixed(0)} µs of CPU per event (/proc), background processes ${((pgUsed.background * 1e6) / accepted).toFixed(0)} µs.` : '') + '\n');
    if (inDb !== null) {
      if (statements) {
        const { rows } = await admin.query<{ query: string; calls: string; rows: string; ms: number; plan: number; hit: string; read: string; dirtied: string; wal: string }>(
          `SELECT query, calls, rows, total_exec_time AS ms, total_plan_time AS plan, shared_blks_hit AS hit, shared_blks_read AS read, shared_blks_dirtied AS dirtied, wal_bytes AS wal
           FROM pg_stat_statements WHERE dbid = $1 ORDER BY total_exec_time DESC`, [dbid]);
        const calls = rows.reduce((n, r) => n + Number(r.calls), 0);
        const wal = rows.reduce((n, r) => n + Number(r.wal), 0);
        const ms = rows.reduce((n, r) => n + r.ms, 0);
        const plan = rows.reduce((n, r) => n + r.plan, 0);
        console.log(`Statements (pg_stat_statements, execution time): ${(calls / accepted).toFixed(2)} per event, ${((ms * 1000) / accepted).toFixed(1)} µs of execution and ${((plan * 1000) / accepted).toFixed(1)} µs of planning per event (planning: 0 unless pg_stat_statements.track_planning is on), ${(wal / accepted).toFixed(0)} bytes of WAL per event.\n`);
        console.log('| statement | calls per event | rows per call | µs per event | planning µs per event | blocks hit / read / dirtied per event | WAL bytes per event |\n|---|---:|---:|---:|---:|---:|---:|');
        for (const r of rows) {
          if (Number(r.calls) / accepted < 0.005 && (r.ms * 1000) / accepted < 0.5) continue;
          const text = r.query.replace(/\s+/g, ' ').slice(0, 110).replace(/\|/g, '\\|');
          console.log(`| \`${text}\` | ${(Number(r.calls) / accepted).toFixed(3)} | ${(Number(r.rows) / Number(r.calls)).toFixed(1)} | ${((r.ms * 1000) / accepted).toFixed(1)} | ${((r.plan * 1000) / accepted).toFixed(1)} | ${[r.hit, r.read, r.dirtied].map((b) => (Number(b) / accepted).toFixed(1)).join(' / ')} | ${(Number(r.wal) / accepted).toFixed(0)} |`);
        }
        console.log('');
      }
      await inDb.query('VACUUM');
      console.log(`Stored per event after VACUUM (table with TOAST, each index):\n\n${table(before, await pgSizes(inDb), accepted)}`);
    }
    await stop(child);
    if (inDb === null) console.log(`Stored per event, bytes in use (dbstat), the server stopped:\n\n${table(before, sqliteSizes(file), accepted)}`);
  } finally {
    await stop(child);
    await group?.remove();
    await inDb?.end().catch(() => undefined);
    await admin.end().catch(() => undefined);
    for (const d of doubles.values()) await d.close();
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
