// What the store writes per delivery, on both stores: a delivery settled by its first request
// keeps that attempt in its row and gets no link row; its later attempts are linked, and the
// attempts view shows them all in order. On PostgreSQL a group commit of attempt records is a
// fixed number of statements, however many records it carries. And the upgrade (SQLite
// migration 19): links stored before keep showing, next to attempts recorded after it.
import { expect } from 'chai';
import Database from 'better-sqlite3';
import pg from 'pg';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import type { AttemptRecord, UnstoredRow } from '../../src/store/delivery-contract.ts';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { openPostgresStore, type PgStore } from '../../src/store/postgres/pg-store.ts';
import type { Store } from '../../src/store/types.ts';
import { countStatements, handOff } from '../helpers/handed-off.ts';
import { tempDir } from '../helpers/test-server.ts';
import { createTestDatabase, requirePostgres, type TestDatabase } from '../helpers/postgres.ts';
import { STORE_KINDS, STORE_LABEL } from '../helpers/stores.ts';

const T0 = 1_800_000_000_000;
const DEST = 'dst_0000000000000001';
const http = (outcome: 'success' | 'retryable', statusCode: number) => ({ statusCode, latencyMs: 5, responseBody: null, errorClass: null, outcome });

// A group commit with failures among its records leaves each destination's health and pause as
// the same records committed one by one would (PostgreSQL writes it in one statement per commit:
// record-attempts.ts FAILING_HEALTH).
const HOUR = 3_600_000;

type Step = ['ok' | 'fail', number] | ['gone', number];

/** The records of `steps` for destination `d` (no deliveries: health only), pausing after `pauseAfterMs` of failures. */
const records = (d: string, steps: readonly Step[], pauseAfterMs: number): AttemptRecord[] => steps.map(([kind, at]) => ({
  claimId: `${d}#1`, destinationId: d, at: T0 + at, message: kind === 'ok' ? 'ok' : 'HTTP 503', pauseAfterMs, updates: [],
  http: { statusCode: kind === 'ok' ? 200 : kind === 'gone' ? 410 : 503, latencyMs: 5, responseBody: null, errorClass: null, outcome: kind === 'ok' ? 'success' : 'retryable' },
  ...(kind === 'gone' ? { pauseNow: 'the receiver answered 410 Gone' } : {}),
}));

const CASES: { name: string; before: Step[]; steps: Step[]; pauseAfterMs: number; paused: boolean }[] = [
  { name: 'failures, a success, failures', before: [], steps: [['fail', 1], ['fail', 2], ['ok', 3], ['fail', 4], ['fail', 5]], pauseAfterMs: 0, paused: false },
  { name: 'a failing run already stored, long enough with the batch', before: [['fail', 0]], steps: [['fail', HOUR], ['fail', 2 * HOUR]], pauseAfterMs: HOUR, paused: true },
  { name: 'a success resets the run before it is long enough', before: [['fail', 0]], steps: [['ok', HOUR - 1], ['fail', HOUR], ['fail', 2 * HOUR - 1]], pauseAfterMs: HOUR, paused: false },
  { name: 'paused by the first failure long enough, kept through a success after it', before: [], steps: [['fail', 0], ['fail', HOUR], ['fail', HOUR + 1], ['ok', HOUR + 2], ['fail', HOUR + 3]], pauseAfterMs: HOUR, paused: true },
  { name: '410 Gone pauses at once', before: [['ok', 0]], steps: [['ok', 1], ['gone', 2], ['ok', 3]], pauseAfterMs: 0, paused: true },
  { name: 'already paused: the pause stays as it was', before: [['gone', 0]], steps: [['fail', 1], ['gone', 2]], pauseAfterMs: 0, paused: true },
];

for (const kind of STORE_KINDS) describe(`store (${STORE_LABEL[kind]}): what a delivery writes`, function () {
  this.timeout(20_000);
  let store: Store;
  let count: (sql: string) => Promise<number>;
  let close: () => Promise<void>;
  let db: TestDatabase | undefined;

  before(async function () {
    if (kind === 'postgres') {
      await requirePostgres(this);
      db = await createTestDatabase();
    }
  });
  after(async () => db?.drop());

  beforeEach(async () => {
    if (kind === 'postgres') {
      await db!.reset();
      store = await openPostgresStore({ url: db!.url });
      const raw = new pg.Client({ connectionString: db!.url });
      await raw.connect();
      count = async (sql) => Number((await raw.query<{ n: string }>(sql)).rows[0].n);
      close = async () => { await raw.end(); await store.close(); };
    } else {
      const dir = tempDir('tl-footprint-');
      store = openSqliteStore({ file: join(dir, 'tracklane.db') });
      const raw = new Database(join(dir, 'tracklane.db'));
      count = async (sql) => (raw.prepare(sql).get() as { n: number }).n;
      close = async () => { raw.close(); await store.close(); rmSync(dir, { recursive: true, force: true }); };
    }
    await store.accounts.create({ scriptId: 'ACCT0001', name: 'a', tier: 'FLEX', addon: true, host: null, country: null, taxRate: null }, 'h', 'p');
    await store.destinations.add({ id: DEST, scriptId: 'ACCT0001', type: 'webhook', name: 'w', enabled: true, settings: {} });
  });
  afterEach(() => close());

  /** `n` events fanned out with one delivery each handed to a lane under `claim`: the rows their records will write. */
  const handedOff = (n: number, claim: string) => handOff(store, n, claim, { scriptId: 'ACCT0001', destinationId: DEST, at: T0 });

  const record = (claim: string, at: number, outcome: 'success' | 'retryable', updates: AttemptRecord['updates']): AttemptRecord => ({
    claimId: claim, destinationId: DEST, at, http: http(outcome, outcome === 'success' ? 200 : 503), message: outcome, updates, pauseAfterMs: 0,
  });

  it('a delivery settled by its first request gets no link row (its attempt is in its row, or lists it: no row at all)', async () => {
    const rows = await handedOff(5, 'fan#1');
    const results = await store.deliveries.recordAttempts(rows.map((row, i) => record('fan#1', T0 + 1, 'success',
      [{ id: -(i + 1), status: 'delivered', attempts: 1, nextAttemptAt: null, row }])));
    expect(results.map((r) => r.applied)).to.deep.equal([[-1], [-2], [-3], [-4], [-5]]);
    expect(await count('SELECT count(*) AS n FROM delivery_attempt_items'), 'link rows').to.equal(0);
    const list = await store.deliveries.list({ destinationId: DEST });
    expect(list.map((d) => d.status)).to.deep.equal(Array(5).fill('delivered'));
    for (const d of list) expect((await store.deliveries.attempts(d.id)).map((a) => a.statusCode)).to.deep.equal([200]);
  });

  it('a retried delivery: its first attempt in its row, the retry linked, both shown in order; a fenced record is linked too', async () => {
    const [row] = await handedOff(1, 'fan#1');
    await store.deliveries.recordAttempts([record('fan#1', T0 + 1, 'retryable', [{ id: -1, status: 'pending', attempts: 1, nextAttemptAt: T0 + 2, row }])]);
    const [claimed] = await store.deliveries.claimDeliveries(DEST, 'lane#1', T0 + 3, T0 + 60_000, 10);
    // A stale claim's record is not applied, but its request carried the delivery: it is on record.
    const [stale] = await store.deliveries.recordAttempts([record('lane#0', T0 + 4, 'success', [{ id: claimed.id, status: 'delivered', attempts: 2, nextAttemptAt: null }])]);
    expect(stale.applied).to.deep.equal([]);
    const [ok] = await store.deliveries.recordAttempts([record('lane#1', T0 + 5, 'success', [{ id: claimed.id, status: 'delivered', attempts: 2, nextAttemptAt: null }])]);
    expect(ok.applied).to.deep.equal([claimed.id]);
    const attempts = await store.deliveries.attempts(claimed.id);
    expect(attempts.map((a) => [a.attemptedAt - T0, a.statusCode])).to.deep.equal([[1, 503], [4, 200], [5, 200]]);
    expect(await count('SELECT count(*) AS n FROM delivery_attempt_items'), 'the two later attempts are linked').to.equal(2);
  });

  it('an attempt keeps what it sent in ~90 bytes less than the object (no keys, digest in base64); older rows read as they were', async () => {
    const [row, other] = await handedOff(2, 'fan#1');
    const sent = { method: 'POST', url: 'https://x.example/hook?key=****', headers: { 'content-type': 'application/json', 'webhook-signature': '****' },
      body: null, bodyBytes: 1234, bodySha256: 'ab12'.repeat(16), bodyTruncated: false };
    const refused = { ...sent, body: '{"id":"L-1"}', bodyBytes: 12 };
    await store.deliveries.recordAttempts([
      { ...record('fan#1', T0 + 1, 'success', [{ id: -1, status: 'delivered', attempts: 1, nextAttemptAt: null, row }]), http: { ...http('success', 200), request: sent } },
      { ...record('fan#1', T0 + 2, 'retryable', [{ id: -2, status: 'pending', attempts: 1, nextAttemptAt: T0 + 9, row: other }]), http: { ...http('retryable', 503), request: refused } },
    ]);
    const listed = await store.deliveries.list({ destinationId: DEST });
    const [a, b] = ['delivered', 'pending'].map((status) => listed.find((d) => d.status === status)!);
    expect((await store.deliveries.attempts(a.id))[0].request).to.deep.equal(sent);
    expect((await store.deliveries.attempts(b.id))[0].request).to.deep.equal(refused);
    const stored = await count('SELECT length(request) AS n FROM delivery_attempts WHERE status_code = 200');
    expect(JSON.stringify(sent).length - stored, 'bytes saved').to.be.at.least(80);
    // A row written before: the object as it was.
    await count(`UPDATE delivery_attempts SET request = '${JSON.stringify(sent)}' WHERE status_code = 200 RETURNING 1 AS n`);
    expect((await store.deliveries.attempts(a.id))[0].request).to.deep.equal(sent);
  });

  for (const c of CASES) it(`${c.name}: health from one commit with failures is what one commit per record leaves`, async () => {
    const one = `dst_${'2'.padStart(16, '0')}`;
    const each = `dst_${'3'.padStart(16, '0')}`;
    for (const d of [one, each]) {
      await store.destinations.add({ id: d, scriptId: 'ACCT0001', type: 'webhook', name: d, enabled: true, settings: {} });
      for (const r of records(d, c.before, c.pauseAfterMs)) await store.deliveries.recordAttempts([r]);
    }
    const batched = await store.deliveries.recordAttempts(records(one, c.steps, c.pauseAfterMs));
    const single: boolean[] = [];
    for (const r of records(each, c.steps, c.pauseAfterMs)) single.push(...(await store.deliveries.recordAttempts([r])).map((x) => x.paused));
    const health = async (d: string) => {
      const h = await store.deliveries.health(d);
      return { ...h, destinationId: undefined };
    };
    expect(await health(one)).to.deep.equal(await health(each));
    expect(single[single.length - 1], 'paused').to.equal(c.paused);
    expect(batched[batched.length - 1].paused, 'paused as the last record leaves it').to.equal(single[single.length - 1]);
  });

  if (kind === 'postgres') it('a group commit of attempt records is a fixed number of statements, not a few per record', async () => {
    const rows = await handedOff(20, 'fan#1');
    const delivered = (row: UnstoredRow, i: number) => record('fan#1', T0 + 1 + i, 'success', [{ id: -(i + 1), status: 'delivered', attempts: 1, nextAttemptAt: null, row }]);
    // Ten requests of one event each (a webhook lane), every one delivered: BEGIN, the batch, COMMIT.
    expect(await countStatements(store as PgStore, () => store.deliveries.recordAttempts(rows.slice(0, 10).map(delivered))), 'ten delivered').to.equal(3);
    // Ten more, one of them refused (a retry for later): the failing destination's health and pause check add one statement.
    expect(await countStatements(store as PgStore, () => store.deliveries.recordAttempts(rows.slice(10).map((row, k) => (k === 4
      ? record('fan#1', T0 + 20 + k, 'retryable', [{ id: -(k + 11), status: 'pending', attempts: 1, nextAttemptAt: T0 + 100, row }])
      : delivered(row, k + 10))))), 'ten with a failure among them').to.equal(4);
    expect((await store.deliveries.list({ destinationId: DEST, status: 'delivered' })).length).to.equal(19);
    expect(await count('SELECT count(*) AS n FROM deliveries'), 'the retry\'s row only: the delivered ones are listed by their attempts').to.equal(1);
    expect(await count('SELECT count(*) AS n FROM delivery_items')).to.equal(1);
    expect(await count('SELECT count(*) AS n FROM delivery_attempts')).to.equal(20);
    const health = await store.deliveries.health(DEST);
    expect([health?.lastSuccessAt, health?.lastFailureAt, health?.failingSince], 'a success after the failure clears failing_since').to.deep.equal([T0 + 20, T0 + 24, null]);
  });
});

describe('store: SQLite migration 19 (a delivery\'s first attempt in its row)', () => {
  it('links stored before keep showing; attempts recorded after the upgrade go in the row or a link', async () => {
    const dir = tempDir('tl-footprint-');
    const file = join(dir, 'old.db');
    const old = new Database(file);
    for (const [i, sql] of MIGRATIONS.slice(0, 18).entries()) {
      old.exec(sql);
      old.pragma(`user_version = ${i + 1}`);
    }
    old.prepare(`INSERT INTO events (id, script_id, name, event_id, status, source, request_id, received_at, errors, warnings, payload)
      VALUES ('e', 'ACCT0001', 'lead_created', 'L-1', 'accepted', 'event', 'r', 1, '[]', '[]', '{}')`).run();
    old.prepare(`INSERT INTO deliveries (id, event_seq, script_id, destination_id, destination_type, event_id, part, status, attempts,
      next_attempt_at, received_at, created_at, updated_at) VALUES (7, 1, 'ACCT0001', ?, 'webhook', 'L-1', 0, 'pending', 1, 1, 1, 1, 1)`).run(DEST);
    old.prepare(`INSERT INTO delivery_attempts (id, destination_id, attempted_at, status_code, latency_ms, outcome, events)
      VALUES (3, ?, 5, 503, 1, 'retryable', 1)`).run(DEST);
    old.prepare('INSERT INTO delivery_attempt_items (attempt_id, delivery_id) VALUES (3, 7)').run();
    old.close();
    const store = openSqliteStore({ file });
    try {
      expect((await store.deliveries.attempts(7)).map((a) => a.statusCode), 'the link stored before').to.deep.equal([503]);
      const [claimed] = await store.deliveries.claimDeliveries(DEST, 'lane#1', 10, 60_000, 10);
      await store.deliveries.recordAttempts([{ claimId: 'lane#1', destinationId: DEST, at: 20, http: http('success', 200), message: 'ok',
        updates: [{ id: claimed.id, status: 'delivered', attempts: 2, nextAttemptAt: null }], pauseAfterMs: 0 }]);
      expect((await store.deliveries.attempts(7)).map((a) => a.statusCode)).to.deep.equal([503, 200]);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('store: PostgreSQL migration 12 (a delivery\'s first attempt in its row, no event_id index)', function () {
  this.timeout(20_000);
  let db: TestDatabase | undefined;
  before(async function () {
    await requirePostgres(this);
    db = await createTestDatabase();
  });
  after(async () => db?.drop());

  it('a database at version 11 keeps its links, loses the index, and records into the new column', async () => {
    // Version 11 as an older release left it: no attempt_id, deliveries_event there, a delivery with a linked attempt.
    await (await openPostgresStore({ url: db!.url })).close();
    const raw = new pg.Client({ connectionString: db!.url });
    await raw.connect();
    try {
      await raw.query(`ALTER TABLE deliveries DROP COLUMN attempt_id; CREATE INDEX deliveries_event ON deliveries(event_id) WHERE event_id IS NOT NULL;
        ALTER TABLE delivery_attempts DROP COLUMN script_id, DROP COLUMN delivered, DROP COLUMN first_seq, DROP COLUMN last_seq;
        DELETE FROM schema_migrations WHERE version >= 12;
        INSERT INTO events (id, script_id, name, event_id, status, source, request_id, received_at, errors, warnings, payload)
          VALUES ('e', 'ACCT0001', 'lead_created', 'L-1', 'accepted', 'event', 'r', 1, '[]', '[]', '{}');
        INSERT INTO deliveries (id, event_seq, script_id, destination_id, destination_type, event_id, part, status, attempts, next_attempt_at, received_at, created_at, updated_at)
          VALUES (7, (SELECT seq FROM events), 'ACCT0001', '${DEST}', 'webhook', 'L-1', 0, 'pending', 1, 1, 1, 1, 1);
        INSERT INTO delivery_attempts (destination_id, attempted_at, status_code, latency_ms, outcome, events) VALUES ('${DEST}', 5, 503, 1, 'retryable', 1);
        INSERT INTO delivery_attempt_items (attempt_id, delivery_id) VALUES (currval('delivery_attempts_id_seq'), 7);`);
      const store = await openPostgresStore({ url: db!.url });
      try {
        expect((await raw.query("SELECT to_regclass('deliveries_event') AS i")).rows[0].i).to.equal(null);
        expect((await store.deliveries.attempts(7)).map((a) => a.statusCode), 'the link stored before').to.deep.equal([503]);
        expect((await store.deliveries.list({ eventId: 'L-1' })).map((d) => d.id), 'found by event id').to.deep.equal([7]);
        const [claimed] = await store.deliveries.claimDeliveries(DEST, 'lane#1', 10, 60_000, 10);
        await store.deliveries.recordAttempts([{ claimId: 'lane#1', destinationId: DEST, at: 20, http: http('success', 200), message: 'ok',
          updates: [{ id: claimed.id, status: 'delivered', attempts: 2, nextAttemptAt: null }], pauseAfterMs: 0 }]);
        expect((await store.deliveries.attempts(7)).map((a) => a.statusCode)).to.deep.equal([503, 200]);
        expect((await raw.query('SELECT attempt_id FROM deliveries WHERE id = 7')).rows[0].attempt_id, 'in the row').to.not.equal(null);
      } finally {
        await store.close();
      }
    } finally {
      await raw.end();
    }
  });
});
