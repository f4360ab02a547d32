// Dev events and dedup: an order first sent with `environment: "dev"` (a shop testing with
// real order ids) must not use up the key its production twin needs. Runs on both append
// paths (in-process and the writer thread), then through delivery and the test endpoint.
import { expect } from 'chai';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { MIGRATIONS, migrate } from '../../src/store/sqlite/migrations.ts';
import type { EventRecord, Store } from '../../src/store/types.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { startTestApp, tempDir, type TestApp } from '../helpers/test-app.ts';
import { checkout, useFixtureWithDouble } from './delivery-fixture.ts';

const row = (i: number, environment: 'prod' | 'dev' | undefined, eventId = 'ORD-9'): EventRecord => ({
  id: `id-${i}`, scriptId: 'ABCD1234', name: 'checkout_completed', eventId, status: 'accepted', source: 'event',
  requestId: `r${i}`, receivedAt: 1_700_000_000_000 + i, errors: [], warnings: [],
  payload: { event: { name: 'checkout_completed', id: eventId }, context: environment ? { environment } : undefined },
});

for (const writerThread of [false, true]) {
  describe(`dedup keys per environment (${writerThread ? 'writer thread' : 'in-process'})`, () => {
    let dir: string;
    let store: Store;
    beforeEach(() => {
      dir = tempDir();
      store = openSqliteStore({ file: join(dir, 'db.sqlite'), writerThread });
    });
    afterEach(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('a dev event does not claim the production key; each environment still dedups within itself', async () => {
      expect(await store.events.append([row(1, 'dev')])).to.deep.equal(['accepted']);
      expect(await store.events.append([row(2, 'prod')]), 'prod after dev').to.deep.equal(['accepted']);
      expect(await store.events.append([row(3, 'dev'), row(4, 'prod'), row(5, undefined)])).to.deep.equal(['duplicate', 'duplicate', 'duplicate']);
      const now = 1_700_000_000_100;
      expect(await store.events.isDuplicate('ABCD1234', 'checkout_completed', 'ORD-9', now)).to.equal(true);
      expect(await store.events.isDuplicate('ABCD1234', 'checkout_completed', 'ORD-9', now, 'dev')).to.equal(true);
      expect(await store.events.isDuplicate('ABCD1234', 'checkout_completed', 'OTHER', now, 'dev')).to.equal(false);
    });

    it('a dev event sent after its production twin is not a duplicate of it', async () => {
      expect(await store.events.append([row(1, 'prod', 'ORD-10'), row(2, 'dev', 'ORD-10')])).to.deep.equal(['accepted', 'accepted']);
    });
  });
}

describe('dedup keys: migration of existing keys', () => {
  it('keeps keys claimed before environments existed, as production keys', () => {
    const db = new Database(':memory:');
    for (const [v, sql] of MIGRATIONS.slice(0, 6).entries()) {
      db.exec(sql);
      db.pragma(`user_version = ${v + 1}`);
    }
    db.prepare(`INSERT INTO dedup_keys (script_id, name, event_id, first_seen_at) VALUES ('A', 'x', '1', 5)`).run();
    migrate(db);
    expect(db.prepare('SELECT * FROM dedup_keys').all()).to.deep.equal([{ script_id: 'A', environment: 'prod', name: 'x', event_id: '1', first_seen_at: 5 }]);
    db.close();
  });
});

describe('dev then prod through intake, delivery and the test endpoint', function () {
  this.timeout(20_000);
  const t = useFixtureWithDouble();

  it('ORD-9 sent as dev and then as prod is stored accepted and delivered once', async () => {
    const scriptId = await t.f.account();
    const dest = await t.f.destination(scriptId, 'ga4', t.dbl.url);
    await t.f.ingest(scriptId, checkout('ORD-9', { context: { environment: 'dev', data_source: 'website' } }));
    await t.f.ingest(scriptId, checkout('ORD-9'));
    await t.f.dispatcher().runOnce();
    const rows = await t.f.store.deliveries.list({ destinationId: dest.id, limit: 10 });
    expect(rows.map((r) => r.status).sort()).to.deep.equal(['delivered', 'skipped']);
    expect(t.dbl.requests).to.have.length(1);
    expect(t.dbl.requests[0].body).to.contain('ORD-9');
  });
});

describe('the test endpoint claims no dedup key', function () {
  let s: TestApp;
  before(async () => (s = await startTestApp()));
  after(async () => s.close());

  it('an order tried on the test endpoint (prod or dev) is still accepted on endpoint 1, and dev keys only warn dev tests', async () => {
    const account = await s.account();
    const dev = checkout('ORD-T', { context: { environment: 'dev', data_source: 'website' } });
    expect((await s.post(INTAKE_PATHS.test, checkout('ORD-T'), { account })).status).to.equal(200);
    expect((await s.post(INTAKE_PATHS.test, dev, { account })).status).to.equal(200);
    expect((await s.post(INTAKE_PATHS.event, dev, { account })).status).to.equal(200);
    const prodTest = await s.post(INTAKE_PATHS.test, checkout('ORD-T'), { account });
    expect(prodTest.body.warnings.join('\n'), 'a dev event does not make the prod test a duplicate').not.to.contain('DUPLICATE_EVENT');
    const devTest = await s.post(INTAKE_PATHS.test, dev, { account });
    expect(devTest.body.warnings.join('\n')).to.contain('DUPLICATE_EVENT');
    expect((await s.post(INTAKE_PATHS.event, checkout('ORD-T'), { account })).status).to.equal(200);
    const events = await s.running.store.events.list({ scriptId: account.scriptId, limit: 10 });
    expect(events.map((e) => e.status).sort()).to.deep.equal(['accepted', 'accepted']);
  });
});
