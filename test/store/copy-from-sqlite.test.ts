// migrate-store's copy, SQLite → PostgreSQL, against a real SQLite file and real databases:
// every row of every table arrives as it was (booleans as booleans, leases dropped), the id
// sequences continue past the copied ids, a target holding data is refused (and replaced
// with force), and a failure midway, or a schema the target has no place for, leaves the
// target without a row (and a fresh target without even the tables).
import { expect } from 'chai';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import type pg from 'pg';
import { openConnection } from '../../src/store/sqlite/connection.ts';
import { migrate as migrateSqlite } from '../../src/store/sqlite/migrations.ts';
import { createPool } from '../../src/store/postgres/connection.ts';
import { migrate as migratePg } from '../../src/store/postgres/migrations.ts';
import { copySqliteToPostgres, StoreCopyError } from '../../src/store/postgres/copy-from-sqlite.ts';
import { createTestDatabase, requirePostgres, type TestDatabase } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/test-server.ts';

const T0 = 1_800_000_000_000;
const LEASES = new Set(['lease_owner', 'lease_until']);

/** One or more rows in every table, with the values a copy gets wrong: false, NULL, non-ASCII, gaps in ids. */
const SEED = `
  INSERT INTO accounts (script_id, name, tier, addon, enabled, host, country, tax_rate, extra_events, customer, rate_limit, endpoint_pins, created_at, updated_at) VALUES
    ('AAAA1111', 'Shop “Über” 🛒', 'PRO', 1, 1, 'https://shop.example', 'DE', 19.5, '["lead_won"]', 'demo', 50, '{"order-sync":1}', ${T0}, ${T0 + 1}),
    ('BBBB2222', 'Off', 'BASIC', 0, 0, NULL, NULL, NULL, '[]', NULL, NULL, '{}', ${T0}, ${T0});
  INSERT INTO access_tokens (id, script_id, hash, prefix, created_at, expires_at) VALUES
    (1, 'AAAA1111', 'hash-old', 'tlk_ab', ${T0}, ${T0 + 86_400_000}), (2, 'AAAA1111', 'hash-new', 'tlk_cd', ${T0 + 5}, NULL),
    (7, 'BBBB2222', 'hash-b', 'tlk_ef', ${T0}, NULL);
  INSERT INTO destinations (id, script_id, type, name, enabled, settings, created_at, updated_at, removed_at) VALUES
    ('dst_a', 'AAAA1111', 'webhook', 'hook', 1, '{"url":"https://hooks.example/in"}', ${T0}, ${T0}, NULL),
    ('dst_b', 'AAAA1111', 'ga4', 'ga', 0, '{}', ${T0}, ${T0 + 3}, ${T0 + 9});
  INSERT INTO events (seq, id, script_id, name, event_id, status, source, request_id, received_at, errors, warnings, payload) VALUES
    (1, 'ev_1', 'AAAA1111', 'lead_created', 'L-1', 'accepted', 'event', 'req-1', ${T0}, '[]', '[]', '{"event":{"name":"lead_created","id":"L-1"}}'),
    (2, 'ev_2', 'AAAA1111', 'lead_created', 'L-1', 'duplicate', 'standard', 'req-2', ${T0 + 1}, '[]', '[]', '{"event":{"name":"lead_created","id":"L-1"}}'),
    (3, 'ev_3', 'AAAA1111', NULL, NULL, 'rejected', 'event', 'req-3', ${T0 + 2}, '[{"code":"INVALID_JSON"}]', '[]', '{'),
    (9, 'ev_9', 'AAAA1111', 'purchase', 'O-9', 'accepted', 'batch', 'req-9', ${T0 + 3}, '[]', '["URL_FALLBACK"]', '{"event":{"name":"purchase","id":"O-9"},"x":"\\u0000 ü"}');
  -- Event 1 has been fanned out (the fan-out cursor is past it); 9 waits, held for one destination, under a lease.
  UPDATE fanout_cursors SET cursor_seq = 1, mapped_to = 1, claimed_to = 1 WHERE part = 0;
  INSERT INTO dispatch_queue (event_seq, lease_owner, lease_until, held_for) VALUES (9, 'sqlite-w1', ${T0 + 30_000}, '["dst_b"]');
  INSERT INTO dedup_keys (script_id, environment, name, event_id, first_seen_at) VALUES
    ('AAAA1111', 'prod', 'lead_created', 'L-1', ${T0}), ('AAAA1111', 'dev', 'lead_created', 'L-1', ${T0 + 1}),
    ('AAAA1111', 'prod', 'purchase', 'O-9', ${T0 + 3});
  INSERT INTO seen_products (script_id, product_id) VALUES ('AAAA1111', 'P-1'), ('AAAA1111', 'P-2');
  INSERT INTO deliveries (id, event_seq, script_id, destination_id, destination_type, event_id, status, skip_reason, attempts,
      next_attempt_at, lease_owner, lease_until, last_status_code, last_error, received_at, created_at, updated_at, delivered_at) VALUES
    (1, 1, 'AAAA1111', 'dst_a', 'webhook', 'L-1', 'delivered', NULL, 1, NULL, NULL, NULL, 200, NULL, ${T0}, ${T0}, ${T0 + 10}, ${T0 + 10}),
    (2, 1, 'AAAA1111', 'dst_b', 'ga4', 'L-1', 'pending', NULL, 2, ${T0 + 60_000}, 'sqlite-d1', ${T0 + 20_000}, 503, 'HTTP 503', ${T0}, ${T0}, ${T0 + 11}, NULL),
    (4, 1, 'AAAA1111', 'dst_b', 'ga4', 'L-1', 'skipped', 'no_client_id', 0, NULL, NULL, NULL, NULL, NULL, ${T0}, ${T0}, ${T0}, NULL);
  INSERT INTO delivery_items (delivery_id, item) VALUES (2, 'item-0'), (4, 'item-1');
  INSERT INTO delivery_attempts (id, destination_id, attempted_at, status_code, latency_ms, response_body, error_class, outcome, message, events) VALUES
    (1, 'dst_a', ${T0 + 10}, 200, 12, '{"ok":true}', NULL, 'success', 'HTTP 200', 1),
    (3, 'dst_b', ${T0 + 11}, NULL, 5000, NULL, 'timeout', 'retryable', 'timeout: no answer', 2);
  INSERT INTO delivery_attempt_items (attempt_id, delivery_id) VALUES (1, 1), (3, 2);
  INSERT INTO destination_health (destination_id, last_success_at, last_failure_at, failing_since, paused_at, pause_reason, paused_destination_updated_at) VALUES
    ('dst_a', ${T0 + 10}, NULL, NULL, NULL, NULL, NULL), ('dst_b', NULL, ${T0 + 11}, ${T0 + 11}, ${T0 + 12}, 'failing for 24 h', ${T0 + 3});
  INSERT INTO custom_records (seq, script_id, customer, endpoint, type, record_key, request_id, received_at, data) VALUES
    (1, 'AAAA1111', 'demo', 'order-sync', 'order', 'O-1', 'req-c1', ${T0}, '{"total":10}'),
    (5, 'AAAA1111', 'demo', 'order-sync', 'note', NULL, 'req-c2', ${T0 + 1}, '{"text":"ß"}');
  INSERT INTO custom_endpoint_usage (script_id, customer, endpoint, version, env, uses, first_used_at, last_used_at) VALUES
    ('AAAA1111', 'demo', 'order-sync', 1, 'production', 3000000000, ${T0}, ${T0 + 7}), ('AAAA1111', 'demo', 'order-sync', 2, 'test', 1, ${T0 + 2}, ${T0 + 2});
  INSERT INTO rule_versions (version, scope, destination, document, author, message, created_at) VALUES
    (1, 'default', 'webhook', '{"destination":"webhook","rules":[]}', 'ana', 'first', ${T0}),
    (2, 'default', 'webhook', '{"rules":[],"destination":"webhook"}', 'bo', 'keys kept in order', ${T0 + 1}),
    (3, 'AAAA1111', 'webhook', '{"destination":"webhook","rules":[{"id":"x","event":"*","output":{}}]}', 'ana', 'account', ${T0 + 2}),
    (4, 'default', 'ga4', '{}', 'ana', 'removed below: AUTOINCREMENT never hands 4 out again', ${T0 + 3});
  DELETE FROM rule_versions WHERE version = 4;
  INSERT INTO rule_live (scope, destination, version) VALUES ('default', 'webhook', 1), ('AAAA1111', 'webhook', 3);
  INSERT INTO rule_changes (id, version, scope, destination, action, author, message, at) VALUES
    (1, 1, 'default', 'webhook', 'publish', 'ana', 'first', ${T0}), (2, 2, 'default', 'webhook', 'publish', 'bo', 'v2', ${T0 + 1}),
    (3, 3, 'AAAA1111', 'webhook', 'publish', 'ana', 'account', ${T0 + 2}), (4, 1, 'default', 'webhook', 'rollback', 'bo', 'v2 broke it', ${T0 + 4});
`;

function seededStore(dir: string): string {
  const file = join(dir, 'tracklane.db');
  const db = openConnection(file);
  try {
    migrateSqlite(db);
    db.exec(SEED);
  } finally {
    db.close();
  }
  return file;
}

/** SQLite's own tables, kept in another shape on PostgreSQL and not copied. */
const SQLITE_ONLY = new Set(['fanout_cursors']);

function sqliteTables(file: string): Map<string, string[]> {
  const db = openConnection(file);
  try {
    const names = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'`).pluck().all() as string[])
      .filter((t) => !SQLITE_ONLY.has(t));
    return new Map(names.map((t) => [t, (db.pragma(`table_info(${t})`) as { name: string }[]).map((c) => c.name)]));
  } finally {
    db.close();
  }
}

/** Each table's rows as sorted JSON lines, booleans as 0/1; `dropLeases` as the copy leaves them. */
async function sqliteRows(file: string, dropLeases: boolean): Promise<Record<string, string[]>> {
  const db = openConnection(file);
  try {
    const out: Record<string, string[]> = {};
    for (const [t, cols] of sqliteTables(file)) {
      const rows = db.prepare(`SELECT ${cols.join(', ')} FROM ${t}`).all() as Record<string, unknown>[];
      out[t] = rows.map((r) => JSON.stringify(cols.map((c) => (dropLeases && LEASES.has(c) ? null : r[c])))).sort();
    }
    return out;
  } finally {
    db.close();
  }
}

async function pgRows(pool: pg.Pool, tables: Map<string, string[]>): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const [t, cols] of tables) {
    const { rows } = await pool.query(`SELECT ${cols.join(', ')} FROM ${t}`);
    out[t] = rows.map((r) => JSON.stringify(cols.map((c) => (typeof r[c] === 'boolean' ? Number(r[c]) : r[c])))).sort();
  }
  return out;
}

async function rowCounts(pool: pg.Pool, tables: Iterable<string>): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of tables) out[t] = (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${t}`)).rows[0].n;
  return out;
}

describe('migrate-store: copying a SQLite store into PostgreSQL', function () {
  this.timeout(60_000);
  const dbs: TestDatabase[] = [];
  const pools: pg.Pool[] = [];
  let dir: string;
  let file: string;

  const target = async () => {
    const db = await createTestDatabase();
    dbs.push(db);
    const pool = createPool({ url: db.url, max: 2 });
    pools.push(pool);
    return { db, pool };
  };

  before(async function () {
    await requirePostgres(this);
  });
  beforeEach(() => {
    dir = tempDir('tl-copy-');
    file = seededStore(dir);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  after(async () => {
    for (const p of pools) await p.end();
    for (const d of dbs) await d.drop();
  });

  it('the seed covers every table of the SQLite schema', async () => {
    const rows = await sqliteRows(file, false);
    expect(Object.entries(rows).filter(([, r]) => r.length === 0).map(([t]) => t), 'tables the seed leaves empty').to.deep.equal([]);
  });

  it('every row of every table arrives as it was, leases dropped; the sequences continue past the copied ids', async () => {
    const { db, pool } = await target();
    const r = await copySqliteToPostgres({ sqliteFile: file, url: db.url });
    const tables = sqliteTables(file);
    expect(Object.keys(r.tables).sort()).to.deep.equal([...tables.keys()].sort());
    expect(r.replaced).to.deep.equal({});
    expect(await pgRows(pool, tables)).to.deep.equal(await sqliteRows(file, true));
    const order = Object.keys(r.tables);
    expect(order.indexOf('accounts'), 'parents first').to.be.below(order.indexOf('access_tokens'));
    expect(order.indexOf('rule_versions')).to.be.below(order.indexOf('rule_live'));
    expect(order.indexOf('rule_versions')).to.be.below(order.indexOf('rule_changes'));

    const next = async (t: string, c: string) =>
      (await pool.query<{ n: number }>(`SELECT nextval(pg_get_serial_sequence($1, $2))::int AS n`, [t, c])).rows[0].n;
    expect(await next('events', 'seq')).to.equal(10);
    expect(await next('deliveries', 'id')).to.equal(5);
    expect(await next('access_tokens', 'id')).to.equal(8);
    expect(await next('rule_versions', 'version'), 'past the version SQLite handed out and deleted').to.equal(5);
    expect(await next('rule_changes', 'id')).to.equal(5);
    expect(await next('custom_records', 'seq')).to.equal(6);
    expect(await next('delivery_attempts', 'id')).to.equal(4);
  });

  it("the accepted events after SQLite's fan-out cursor are queued on PostgreSQL; its cursor table is not copied", async () => {
    const db0 = openConnection(file);
    try {
      // 12 accepted and never fanned out (after the cursor), 13 rejected: only 12 is owed.
      db0.exec(`INSERT INTO events (seq, id, script_id, name, event_id, status, source, request_id, received_at, errors, warnings, payload) VALUES
        (12, 'ev_12', 'AAAA1111', 'purchase', 'O-12', 'accepted', 'event', 'req-12', ${T0 + 5}, '[]', '[]', '{"event":{"name":"purchase","id":"O-12"}}'),
        (13, 'ev_13', 'AAAA1111', NULL, NULL, 'rejected', 'event', 'req-13', ${T0 + 6}, '[{"code":"INVALID_JSON"}]', '[]', '{')`);
    } finally {
      db0.close();
    }
    const { db, pool } = await target();
    const r = await copySqliteToPostgres({ sqliteFile: file, url: db.url });
    expect(r.tables).to.not.have.property('fanout_cursors');
    const queued = (await pool.query<{ event_seq: number; held_for: string | null }>('SELECT event_seq::int, held_for FROM dispatch_queue ORDER BY event_seq')).rows;
    expect(queued).to.deep.equal([{ event_seq: 9, held_for: '["dst_b"]' }, { event_seq: 12, held_for: null }]);
    expect(r.tables.dispatch_queue).to.equal(2);
  });

  it('a target that holds tracklane data is refused and left as it was; force replaces it whole', async () => {
    const { db, pool } = await target();
    await copySqliteToPostgres({ sqliteFile: file, url: db.url });
    const tables = sqliteTables(file);
    const before = await pgRows(pool, tables);

    const sqlite = openConnection(file);
    sqlite.exec(`INSERT INTO accounts (script_id, name, tier, created_at, updated_at) VALUES ('CCCC3333', 'Later', 'FLEX', ${T0}, ${T0});
      DELETE FROM custom_records WHERE seq = 5`);
    sqlite.close();
    let refused: unknown;
    await copySqliteToPostgres({ sqliteFile: file, url: db.url }).catch((e: unknown) => (refused = e));
    expect(refused).to.be.instanceOf(StoreCopyError);
    expect((refused as Error).message).to.match(/already holds tracklane data \(rows: accounts 2, access_tokens 3, .*\); nothing was copied\. --force replaces it$/);
    expect(await pgRows(pool, tables)).to.deep.equal(before);

    const r = await copySqliteToPostgres({ sqliteFile: file, url: db.url, force: true });
    expect(r.replaced).to.include({ accounts: 2, custom_records: 2, events: 4 });
    expect(r.tables).to.include({ accounts: 3, custom_records: 1 });
    expect(await pgRows(pool, tables)).to.deep.equal(await sqliteRows(file, true));
  });

  it('a failure midway rolls everything back: not a row is left in the target', async () => {
    const { db, pool } = await target();
    await migratePg(pool);
    // Refuses every row of the table copied last, after the others have been written.
    await pool.query('ALTER TABLE seen_products ADD CONSTRAINT refuse_all CHECK (false)');
    let failed: unknown;
    await copySqliteToPostgres({ sqliteFile: file, url: db.url }).catch((e: unknown) => (failed = e));
    expect(failed).to.be.instanceOf(StoreCopyError);
    expect((failed as Error).message).to.match(/^copying seen_products failed, nothing was copied: .*refuse_all/);
    const counts = await rowCounts(pool, sqliteTables(file).keys());
    expect(Object.values(counts).every((n) => n === 0), JSON.stringify(counts)).to.equal(true);
  });

  it('a source column the PostgreSQL schema has no place for is refused, and a fresh target keeps no table', async () => {
    const { db, pool } = await target();
    const sqlite = openConnection(file);
    sqlite.exec('ALTER TABLE events ADD COLUMN note TEXT');
    sqlite.close();
    let refused: unknown;
    await copySqliteToPostgres({ sqliteFile: file, url: db.url }).catch((e: unknown) => (refused = e));
    expect(refused).to.be.instanceOf(StoreCopyError);
    expect((refused as Error).message).to.equal('events.note has no counterpart in the PostgreSQL schema; nothing was copied');
    const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = current_schema()`);
    expect(rows[0].n, 'the schema was created in the same transaction').to.equal(0);
  });

  it('a missing store or an unreachable target is a one-line refusal', async () => {
    let err: unknown;
    await copySqliteToPostgres({ sqliteFile: join(dir, 'nope.db'), url: 'postgres://postgres@127.0.0.1:5432/postgres' }).catch((e: unknown) => (err = e));
    expect((err as Error).message).to.equal(`no SQLite store at ${join(dir, 'nope.db')}`);
    const { db } = await target();
    const missing = new URL(db.url);
    missing.pathname = '/tl_test_does_not_exist';
    await copySqliteToPostgres({ sqliteFile: file, url: missing.toString() }).catch((e: unknown) => (err = e));
    expect(err).to.be.instanceOf(StoreCopyError);
    expect((err as Error).message).to.match(/^connecting to the target failed, nothing was copied: database "tl_test_does_not_exist" does not exist$/);
  });
});
