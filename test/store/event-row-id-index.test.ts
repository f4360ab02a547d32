// Lookups by an event row's own id (events.id: the admin API's event view and trace, `events
// show`, the search box, the deliveries of an event) go through an index on both stores
// (SQLite migration 23, PostgreSQL version 16) instead of reading the whole events table, and
// answer as before. The index is not unique: a store already holding two rows with one id
// still opens, and shows both.
import { expect } from 'chai';
import Database from 'better-sqlite3';
import pg from 'pg';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import type { EventFilter, EventRecord, Store } from '../../src/store/types.ts';
import { eventFilterSql } from '../../src/store/event-filter.ts';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { openPostgresStore } from '../../src/store/postgres/pg-store.ts';
import { STORE_KINDS, STORE_LABEL, storeHarness } from '../helpers/stores.ts';
import { createTestDatabase, requirePostgres } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/test-server.ts';

const T0 = 1_800_000_000_000;
const ACCOUNT = 'ACCT0001';
const ROWS = 500;

const row = (i: number): EventRecord => ({
  id: `row-${i}`, scriptId: ACCOUNT, name: 'lead_created', eventId: `L-${i}`, status: 'accepted', source: 'event', requestId: `req-${i}`,
  receivedAt: T0 + i, errors: [], warnings: [], payload: { event: { name: 'lead_created', id: `L-${i}`, note: `the ${i}th lead, ünïcode` } },
});

/** The statements the stores run for a lookup by row id, placeholders in the store's style, with their arguments. */
function lookups(mark: (n: number) => string): Record<string, [string, unknown[]]> {
  const listing = (f: EventFilter): [string, unknown[]] => {
    const args: unknown[] = [];
    const where = eventFilterSql(f, args, mark);
    args.push(10);
    return [`SELECT * FROM events ${where} ORDER BY seq DESC LIMIT ${mark(args.length)}`, args];
  };
  return {
    'events list / admin event view': listing({ id: 'row-7' }),
    'the search box': listing({ search: 'row-7' }),
    'the deliveries of an event (eventRowId)': [`SELECT seq FROM events WHERE id = ${mark(1)}`, ['row-7']],
  };
}

for (const kind of STORE_KINDS) describe(`events by row id: ${STORE_LABEL[kind]} looks them up through an index`, function () {
  this.timeout(30_000);
  const harness = storeHarness(kind);
  let store: Store;

  beforeEach(async () => {
    store = await harness.open();
    await store.accounts.create({ scriptId: ACCOUNT, name: 'Shop', tier: 'FLEX', addon: true, host: null, country: null, taxRate: null }, 'h', 'p');
    await store.events.append(Array.from({ length: ROWS }, (_, i) => row(i)));
  });
  afterEach(() => harness.close());

  it('the listing by id, the search box and the deliveries-of-an-event subquery use events_id', async () => {
    const plans: Record<string, string> = {};
    if (kind === 'sqlite') {
      const raw = new Database(harness.file!, { readonly: true });
      try {
        for (const [what, [sql, args]] of Object.entries(lookups(() => '?'))) {
          plans[what] = (raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[]).map((r) => r.detail).join('\n');
        }
      } finally {
        raw.close();
      }
    } else {
      const raw = new pg.Client({ connectionString: harness.database!.url });
      await raw.connect();
      try {
        await raw.query('ANALYZE events');
        // Without the index the planner would still find a way that is no sequential scan
        // (events_pkey backwards, filtering every row): the plan must name events_id.
        await raw.query('SET enable_seqscan = off');
        for (const [what, [sql, args]] of Object.entries(lookups((n) => `$${n}`))) {
          const { rows } = await raw.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, args);
          plans[what] = rows.map((r) => r['QUERY PLAN']).join('\n');
        }
      } finally {
        await raw.end();
      }
    }
    for (const [what, plan] of Object.entries(plans)) expect(plan, `${what}:\n${plan}`).to.match(/\bevents_id\b/);
  });

  it('answers as before: the one event by its id, found by the search box too, nothing for an unknown id', async () => {
    const [e] = await store.events.list({ id: 'row-7', limit: 1 });
    expect(e).to.include({ id: 'row-7', eventId: 'L-7', scriptId: ACCOUNT, status: 'accepted' });
    expect(e.payload).to.deep.equal(row(7).payload);
    expect((await store.events.list({ id: 'row-7', limit: 10 })).map((x) => x.id)).to.deep.equal(['row-7']);
    expect((await store.events.summaries({ search: 'row-7', limit: 10 })).map((x) => x.id)).to.deep.equal(['row-7']);
    expect((await store.events.summaries({ search: 'L-9', scriptId: ACCOUNT, limit: 10 })).map((x) => x.id)).to.deep.equal(['row-9']);
    expect(await store.events.list({ id: 'row-none', limit: 10 })).to.deep.equal([]);
  });
});

describe('events by row id: the index is not unique', function () {
  this.timeout(30_000);
  const DUPLICATES = `INSERT INTO events (id, script_id, name, event_id, status, source, request_id, received_at, errors, warnings, payload)
    VALUES ('twice', '${ACCOUNT}', 'lead_created', 'L-1', 'accepted', 'event', 'r1', ${T0}, '[]', '[]', '{"n":1}'),
           ('twice', '${ACCOUNT}', 'lead_created', 'L-2', 'accepted', 'event', 'r2', ${T0 + 1}, '[]', '[]', '{"n":2}');`;

  it('SQLite: a store at schema 21 holding two rows with one id migrates, and lists both', async () => {
    const dir = tempDir('tl-rowid-');
    try {
      const file = join(dir, 'tracklane.db');
      const old = new Database(file);
      for (let i = 0; i < 21; i++) old.exec(MIGRATIONS[i]);
      old.pragma('user_version = 21');
      old.exec(DUPLICATES);
      old.close();
      const store = openSqliteStore({ file });
      try {
        expect((await store.events.list({ id: 'twice', limit: 10 })).map((e) => e.payload)).to.deep.equal([{ n: 2 }, { n: 1 }]);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('PostgreSQL: a database before version 16 holding two rows with one id migrates, and lists both', async function () {
    await requirePostgres(this);
    const db = await createTestDatabase();
    try {
      await (await openPostgresStore({ url: db.url })).close();
      const raw = new pg.Client({ connectionString: db.url });
      await raw.connect();
      try {
        await raw.query(`DROP INDEX events_id; DELETE FROM schema_migrations WHERE version >= 16; ${DUPLICATES}`);
      } finally {
        await raw.end();
      }
      const store = await openPostgresStore({ url: db.url });
      try {
        expect((await store.events.list({ id: 'twice', limit: 10 })).map((e) => e.payload)).to.deep.equal([{ n: 2 }, { n: 1 }]);
      } finally {
        await store.close();
      }
    } finally {
      await db.drop();
    }
  });
});
