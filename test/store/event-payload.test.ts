// Event payloads as the events table keeps them (payload-codec.ts), on both stores: packed to
// about a quarter of their JSON text, and given back as they were to every reader (listings,
// summaries, the fan-out claim, a delivery's claim, the admin API's event view); rows stored
// before the packed form (payload text, payload_packed NULL) read as they did, in a store
// migrated from before it too; SQLite backup and restore, and the copy into PostgreSQL, keep both.
import { expect } from 'chai';
import Database from 'better-sqlite3';
import pg from 'pg';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import type { EventRecord, Store } from '../../src/store/types.ts';
import { packPayload, payloadJson, PACK_MIN_CHARS } from '../../src/store/payload-codec.ts';
import { PAYLOAD_DICTIONARY_1 } from '../../src/store/payload-dictionary.ts';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { openConnection } from '../../src/store/sqlite/connection.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { openPostgresStore } from '../../src/store/postgres/pg-store.ts';
import { backupSqlite } from '../../src/store/sqlite/backup.ts';
import { restoreSqlite } from '../../src/store/sqlite/restore.ts';
import { copySqliteToPostgres } from '../../src/store/postgres/copy-from-sqlite.ts';
import { FULL_CHECKOUT_COMPLETED } from '../schema/payloads.ts';
import { STORE_KINDS, STORE_LABEL, type StoreKind } from '../helpers/stores.ts';
import { createTestDatabase, requirePostgres, type TestDatabase } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/test-server.ts';
import { startTestApp } from '../helpers/test-app.ts';
import { auth, TOKEN } from '../admin/admin-client.ts';

const T0 = 1_800_000_000_000;
const ACCOUNT = 'ACCT0001';
const DEST = 'dst_0000000000000001';
/** A large payload with what a text round trip gets wrong: non-ASCII, an emoji, escapes, a NUL. */
const BIG = { ...FULL_CHECKOUT_COMPLETED, user: { first_name: 'Ștefan', last_name: 'Größ 🛒', note: 'a "quoted"\n\\ line \u0000' } };
/** A rejected body as received (no shape the dictionary knows). */
const ODD = { whatever: Array.from({ length: 30 }, (_, i) => `value-${i}`), nested: { deep: [1.5, -2e-7, null, true] } };

const row = (id: string, payload: unknown, over: Partial<EventRecord> = {}): EventRecord => ({
  id, scriptId: ACCOUNT, name: 'checkout_completed', eventId: `O-${id}`, status: 'accepted', source: 'event', requestId: `req-${id}`,
  receivedAt: T0, errors: [], warnings: [], payload, ...over,
});

/** An old-format row (the payload as JSON text, nothing packed) and its queue entry, as a store before the packed form left them. */
const OLD_ROW = `INSERT INTO events (id, script_id, name, event_id, status, source, request_id, received_at, errors, warnings, payload)
  VALUES ('old', '${ACCOUNT}', 'checkout_completed', 'O-old', 'accepted', 'event', 'req-old', ${T0}, '[]', '[]',
  '${JSON.stringify(BIG).replace(/'/g, "''")}');
  INSERT INTO dispatch_queue (event_seq) SELECT seq FROM events WHERE id = 'old';`;

describe('event payloads: the packed form (payload-codec.ts)', () => {
  it('format 1 deflates against a dictionary that never changes; short payloads stay text; an unknown format is refused', () => {
    expect(createHash('sha256').update(PAYLOAD_DICTIONARY_1).digest('hex'), 'format 1 rows were packed against exactly these bytes')
      .to.equal('afa61598ee0482c195af5bc8aa6c12386d62efe078a70c41b09efa63ad271f3d');
    const json = JSON.stringify(BIG);
    const stored = packPayload(json);
    expect(stored.payload).to.equal('');
    expect(stored.packed![0]).to.equal(1);
    expect(stored.packed!.length).to.be.below(json.length * 0.45);
    expect(payloadJson({ payload: stored.payload, payload_packed: stored.packed })).to.equal(json);
    expect(packPayload('null')).to.deep.equal({ payload: 'null', packed: null });
    expect(packPayload('x'.repeat(PACK_MIN_CHARS - 1)).packed).to.equal(null);
    const future = Buffer.from(stored.packed!);
    future[0] = 2;
    expect(() => payloadJson({ payload: '', payload_packed: future })).to.throw(/format 2/);
  });
});

for (const kind of STORE_KINDS) describe(`event payloads: ${STORE_LABEL[kind]} stores them packed, every reader gets them back`, function () {
  this.timeout(30_000);
  let db: TestDatabase | undefined;
  let dir: string;
  let store: Store;
  /** The store's own rows, read around it. */
  let raw: (sql: string) => Promise<Record<string, unknown>[]>;
  let exec: (sql: string) => Promise<void>;

  before(async function () {
    if (kind === 'postgres') {
      await requirePostgres(this);
      db = await createTestDatabase();
    }
  });
  after(() => db?.drop());
  beforeEach(async () => {
    dir = tempDir('tl-payload-');
    ({ store, raw, exec } = await openKind(kind, dir, db));
    await store.accounts.create({ scriptId: ACCOUNT, name: 'Shop', tier: 'FLEX', addon: true, host: null, country: null, taxRate: null }, 'h', 'p');
    await store.destinations.add({ id: DEST, scriptId: ACCOUNT, type: 'webhook', name: 'hook', enabled: true, settings: {} });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a large payload is stored packed, a short one as text; listings, summaries, the fan-out claim and a delivery claim read them as they were', async () => {
    await store.events.append([
      row('big', BIG),
      row('odd', ODD, { status: 'rejected', errors: [{ field: 'event', code: 'REQUIRED_FIELD_MISSING', message: 'x' }] }),
      row('none', null, { status: 'rejected', name: null, eventId: null }),
    ]);
    const stored = await raw(`SELECT id, payload, payload_packed FROM events ORDER BY seq`);
    expect(stored.map((r) => [r.id, r.payload, r.payload_packed === null ? null : 'packed'])).to.deep.equal([
      ['big', '', 'packed'], ['odd', '', 'packed'], ['none', 'null', null]]);
    expect((stored[0].payload_packed as Buffer).length, 'about a quarter of the text').to.be.below(JSON.stringify(BIG).length * 0.45);

    const listed = await store.events.list({ scriptId: ACCOUNT, limit: 10 });
    expect(listed.map((e) => [e.id, e.payload])).to.deep.equal([['none', null], ['odd', ODD], ['big', BIG]]);
    expect((await store.events.list({ id: 'big', limit: 1 }))[0].payload).to.deep.equal(BIG);
    const summaries = await store.events.summaries({ scriptId: ACCOUNT, limit: 10 });
    expect(summaries.map((s) => [s.id, s.errorCount, s.firstErrorCode])).to.deep.equal([['none', 0, null], ['odd', 1, 'REQUIRED_FIELD_MISSING'], ['big', 0, null]]);

    const [claimed] = await store.deliveries.claimEvents('fan#1', T0, 60_000, 10);
    expect(claimed.event.payload, 'the fan-out claim').to.deep.equal(BIG);
    await store.deliveries.completeFanOut('fan#1', T0, [{
      seq: claimed.seq, scriptId: ACCOUNT, eventId: 'O-big', receivedAt: T0,
      deliveries: [{ destinationId: DEST, destinationType: 'webhook', status: 'pending', part: 0,
        item: { native: { rule: 'r', fields: {} } as never, eventId: 'O-big', identifiers: {}, attribution: {}, receivedAt: T0 } }],
    }]);
    const [delivery] = await store.deliveries.claimDeliveries(DEST, 'lane#1', T0 + 1, T0 + 60_000, 10);
    expect(delivery.item?.event, 'a delivery claim joins the event back').to.deep.equal(BIG);
  });

  it('a row stored before the packed form (text, payload_packed NULL) reads as it did, next to packed ones', async () => {
    await exec(OLD_ROW);
    await store.events.append([row('new', BIG)]);
    const listed = await store.events.list({ scriptId: ACCOUNT, limit: 10 });
    expect(listed.map((e) => [e.id, e.payload])).to.deep.equal([['new', BIG], ['old', BIG]]);
    const claimed = await store.deliveries.claimEvents('fan#1', T0, 60_000, 10);
    expect(claimed.map((e) => [e.event.id, e.event.payload])).to.deep.equal([['old', BIG], ['new', BIG]]);
  });
});

/** A store of `kind`, and its database read and written around it. */
async function openKind(kind: StoreKind, dir: string, db: TestDatabase | undefined) {
  if (kind === 'sqlite') {
    const file = join(dir, 'tracklane.db');
    const store = openSqliteStore({ file });
    const conn = openConnection(file);
    const close = store.close.bind(store);
    store.close = async () => {
      conn.close();
      await close();
    };
    return { store, raw: async (sql: string) => conn.prepare(sql).all() as Record<string, unknown>[], exec: async (sql: string) => void conn.exec(sql) };
  }
  await db!.reset();
  const store = await openPostgresStore({ url: db!.url });
  const pool = new pg.Pool({ connectionString: db!.url, max: 1 });
  const close = store.close.bind(store);
  store.close = async () => {
    await pool.end();
    await close();
  };
  return { store, raw: async (sql: string) => (await pool.query(sql)).rows as Record<string, unknown>[], exec: async (sql: string) => void (await pool.query(sql)) };
}

describe('event payloads: stores from before the packed form, backups, the copy into PostgreSQL', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = tempDir('tl-payload-');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A SQLite store as the build before the packed form left it (schema 19) with one old row, opened by this build, and given one new row. */
  async function upgradedStore(file: string): Promise<Store> {
    const old = new Database(file);
    for (let i = 0; i < 19; i++) old.exec(MIGRATIONS[i]);
    old.pragma('user_version = 19');
    old.exec(`INSERT INTO accounts (script_id, name, tier, addon, enabled, created_at, updated_at) VALUES ('${ACCOUNT}', 'Shop', 'FLEX', 1, 1, ${T0}, ${T0});`);
    old.exec(OLD_ROW);
    old.close();
    const store = openSqliteStore({ file });
    await store.events.append([row('new', BIG)]);
    return store;
  }

  const payloads = async (store: Store) => (await store.events.list({ scriptId: ACCOUNT, limit: 10 })).map((e) => [e.id, e.payload]);

  it('SQLite: a store migrated from before keeps its old row readable; a backup restored elsewhere reads both', async () => {
    const file = join(dir, 'tracklane.db');
    const store = await upgradedStore(file);
    expect(await payloads(store)).to.deep.equal([['new', BIG], ['old', BIG]]);
    await store.close();
    backupSqlite(file, join(dir, 'backup.db'));
    restoreSqlite(join(dir, 'backup.db'), join(dir, 'restored', 'tracklane.db'));
    const restored = openSqliteStore({ file: join(dir, 'restored', 'tracklane.db') });
    try {
      expect(await payloads(restored)).to.deep.equal([['new', BIG], ['old', BIG]]);
    } finally {
      await restored.close();
    }
  });

  it('the copy into PostgreSQL keeps packed and old rows readable, the fan-out claim included', async function () {
    await requirePostgres(this);
    const file = join(dir, 'tracklane.db');
    await (await upgradedStore(file)).close();
    const db = await createTestDatabase();
    try {
      await copySqliteToPostgres({ sqliteFile: file, url: db.url });
      const store = await openPostgresStore({ url: db.url });
      try {
        expect(await payloads(store)).to.deep.equal([['new', BIG], ['old', BIG]]);
        const claimed = await store.deliveries.claimEvents('fan#1', T0, 60_000, 10);
        expect(claimed.map((e) => [e.event.id, e.event.payload])).to.deep.equal([['old', BIG], ['new', BIG]]);
      } finally {
        await store.close();
      }
    } finally {
      await db.drop();
    }
  });

  it('the admin API shows an event posted to endpoint 1 with its payload as normalised', async () => {
    const app = await startTestApp({ ADMIN_TOKEN: TOKEN });
    try {
      const shop = await app.account();
      const answer = await app.post('/webhooks/service/event', BIG, { account: shop });
      expect(answer.status).to.equal(200);
      const [stored] = await app.running.store.events.list({ scriptId: shop.scriptId, limit: 1 });
      const detail = await (await fetch(`${app.url}/admin/events/${stored.id}?reveal=identifiers`, { headers: auth })).json() as { event: { payload: unknown } };
      expect(detail.event.payload).to.deep.equal(stored.payload);
      expect((stored.payload as typeof BIG).user.first_name).to.equal('Ștefan');
    } finally {
      await app.close();
    }
  });
});
