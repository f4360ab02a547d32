// Batch intake (POST /webhooks/service/events): the same checks as endpoint 1 event by
// event, one transaction per batch, per-index results, every refusal storing nothing.
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { request } from 'node:http';
import { randomBytes } from 'node:crypto';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { startTestApp, waitFor, type TestApp, type TestAccount } from '../helpers/test-app.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { BATCH_PATH } from '../../src/http/batch-route.ts';
import { sqliteFile } from '../../src/store/open-store.ts';
import { SETTINGS } from '../delivery/delivery-fixture.ts';

// Clean (no warnings): consent and page URL are given.
const lead = (id: string) => ({
  event: { name: 'lead_created', id },
  context: { environment: 'prod', data_source: 'crm', url: 'https://shop.example/contact' },
  consent: { analytics: true, personalization: true, marketing: true },
});
const invalid = { event: { name: 'checkout_completed', value: 10, currency: 'EUR' }, context: { environment: 'prod', data_source: 'website' } };

/** One clean event in `batch` and, beside it, a member nested `levels` deep. */
const deepSibling = (levels: number) => `{"batch":[${JSON.stringify(lead('R-1'))}],"sibling":${'['.repeat(levels)}${']'.repeat(levels)}}`;

describe('batch intake', () => {
  let s: TestApp;
  let a: TestAccount;
  before(async () => {
    s = await startTestApp({ MAX_BATCH_EVENTS: '10', MAX_BATCH_BYTES: '65536', MAX_BODY_BYTES: '4096' }, { busyTimeoutMs: 100 });
    a = await s.account();
  });
  after(() => s.close());

  const stored = async (account = a) => s.running.store.events.list({ scriptId: account.scriptId, limit: 1000 });
  const postBatch = (batch: unknown, account = a) => s.post(BATCH_PATH, { batch }, { account });

  it('stores a mixed batch event by event and answers counts and per-index results', async () => {
    const r = await postBatch([lead('B-1'), lead('B-2'), invalid, lead('B-1'), lead('B-3')]);
    expect(r.status).to.equal(200);
    expect(r.body).to.include({ emitter: 'tracklane', version: 1, level: 1, accepted: 3, rejected: 1, duplicates: 1 });
    expect(r.body.detail).to.equal('Batch received: 3 accepted, 1 rejected, 1 duplicate');
    expect(r.body.results).to.have.length(2);
    const [bad, dup] = r.body.results;
    expect(bad).to.include({ index: 2, id: null, status: 'rejected' });
    expect(bad.errors).to.deep.include({ field: 'event.id', code: 'REQUIRED_FIELD_MISSING', message: bad.errors.find((e: any) => e.field === 'event.id').message });
    expect(dup).to.deep.equal({ index: 3, id: 'B-1', status: 'duplicate', errors: [], warnings: [] });

    const rows = (await stored()).filter((e) => e.source === 'batch');
    expect(rows.map((e) => `${e.eventId}:${e.status}`).sort()).to.deep.equal(['B-1:accepted', 'B-1:duplicate', 'B-2:accepted', 'B-3:accepted', 'null:rejected']);
    expect(new Set(rows.map((e) => e.requestId)).size).to.equal(1);
    expect(rows.find((e) => e.status === 'rejected')!.payload).to.deep.equal(invalid);
  });

  it('answers level 0 with no results when every event is accepted cleanly', async () => {
    const r = await postBatch([lead('C-1'), lead('C-2')]);
    expect(r.body).to.deep.equal({
      emitter: 'tracklane', detail: 'Batch received: 2 accepted, 0 rejected, 0 duplicates', level: 0, version: 1,
      accepted: 2, rejected: 0, duplicates: 0, results: [],
    });
  });

  it('gives a duplicate its warnings; accepted events\' warnings are for the test endpoint', async () => {
    const warned = { event: { name: 'order_canceled', id: 'W-1' }, context: { environment: 'prod' } };
    const r = await postBatch([warned, warned]);
    expect(r.body).to.include({ accepted: 1, duplicates: 1, level: 1 });
    expect(r.body.results).to.have.length(1);
    expect(r.body.results[0]).to.include({ index: 1, id: 'W-1', status: 'duplicate' });
    expect(r.body.results[0].warnings.some((w: any) => w.field === 'context.data_source')).to.equal(true);
  });

  it('marks an event endpoint 1 stored earlier as a duplicate', async () => {
    expect((await s.post(INTAKE_PATHS.event, lead('D-1'), { account: a })).status).to.equal(200);
    const r = await postBatch([lead('D-2'), lead('D-1')]);
    expect(r.body).to.include({ accepted: 1, duplicates: 1 });
    expect(r.body.results).to.deep.equal([{ index: 1, id: 'D-1', status: 'duplicate', errors: [], warnings: [] }]);
    // And the other way round: endpoint 1 after the batch.
    expect((await s.post(INTAKE_PATHS.event, lead('D-2'), { account: a })).status).to.equal(200);
    expect((await stored()).filter((e) => e.eventId === 'D-2').map((e) => e.status).sort()).to.deep.equal(['accepted', 'duplicate']);
  });

  it('rejects one event over endpoint 1\'s limits, stored without its body, and keeps the others', async () => {
    const deep: any = lead('E-2');
    let at = deep.context;
    for (let i = 0; i < 40; i++) at = at.x = {};
    const r = await postBatch([lead('E-1'), deep, 'not an event', { ...lead('E-4'), note: 'x'.repeat(5000) }]);
    expect(r.status).to.equal(200);
    expect(r.body).to.include({ accepted: 1, rejected: 3 });
    const [d, n, big] = r.body.results;
    expect(d).to.include({ index: 1, id: 'E-2', status: 'rejected' });
    expect(d.errors[0]).to.include({ code: 'INVALID_BODY' });
    expect(d.errors[0].field).to.match(/^batch\[1\]\.context\.x/);
    expect(n.errors[0]).to.include({ field: 'batch[2]', code: 'INVALID_BODY' });
    expect(big.errors[0]).to.include({ field: 'batch[3]', code: 'PAYLOAD_TOO_LARGE' });
    const row = (await stored()).find((e) => e.eventId === 'E-2')!;
    expect(row.status).to.equal('rejected');
    expect(row.payload).to.equal(null);
  });

  describe('refusals store nothing', () => {
    const refusals: [string, () => Promise<{ status: number; body: any }>, number, string][] = [
      ['invalid JSON', () => s.post(BATCH_PATH, null, { account: a, raw: '{"batch": [' }), 400, 'INVALID_BODY'],
      ['an array body', () => s.post(BATCH_PATH, [lead('R-1')], { account: a }), 400, 'INVALID_BODY'],
      ['no batch member', () => s.post(BATCH_PATH, { events: [lead('R-1')] }, { account: a }), 400, 'INVALID_BODY'],
      ['a member beside batch', () => s.post(BATCH_PATH, { batch: [lead('R-1')], note: 'x' }, { account: a }), 400, 'INVALID_BODY'],
      ['a deep member beside batch', () => s.post(BATCH_PATH, null, { account: a, raw: deepSibling(30_000) }), 400, 'INVALID_BODY'],
      ['batch not an array', () => postBatch(lead('R-1')), 400, 'INVALID_BODY'],
      ['an empty batch', () => postBatch([]), 400, 'INVALID_BODY'],
      ['more events than MAX_BATCH_EVENTS', () => postBatch(Array.from({ length: 11 }, (_, i) => lead(`R-${i}`))), 413, 'PAYLOAD_TOO_LARGE'],
      ['more bytes than MAX_BATCH_BYTES', () => postBatch([{ ...lead('R-1'), pad: 'y'.repeat(70_000) }]), 413, 'PAYLOAD_TOO_LARGE'],
      ['no credentials', () => s.post(BATCH_PATH, { batch: [lead('R-1')] }, { query: `id=${a.scriptId}` }), 401, 'AUTH_MISSING'],
      ['a wrong token', () => s.post(BATCH_PATH, { batch: [lead('R-1')] }, { query: `id=${a.scriptId}`, headers: { 'x-service-access-token': 'nope' } }), 401, 'INVALID_CREDENTIALS'],
    ];
    for (const [what, send, status, code] of refusals) {
      it(`${what} → ${status} ${code}`, async () => {
        const before = (await stored()).length;
        const r = await send();
        expect(r.status).to.equal(status);
        expect(r.body.level).to.equal(2);
        expect(r.body.errors[0]).to.match(new RegExp(`^${code}: `));
        expect((await stored()).length).to.equal(before);
      });
    }

    it('refuses a deep body as too deep before parsing it, whatever member holds the depth', async () => {
      const cutShort = `{"batch":[${JSON.stringify(lead('R-1'))}],"sibling":${'['.repeat(60_000)}`;
      for (const raw of [deepSibling(30_000), cutShort, `{"batch":[${JSON.stringify(lead('R-1'))},${'['.repeat(30_000)}${']'.repeat(30_000)}]}`]) {
        const before = (await stored()).length;
        const r = await s.post(BATCH_PATH, null, { account: a, raw });
        expect(r.status).to.equal(400);
        expect(r.body.errors[0]).to.match(/^INVALID_BODY: .*nested deeper than 64 levels/);
        expect((await stored()).length).to.equal(before);
      }
    });

    it('refuses an account without the add-on with 403, storing nothing', async () => {
      const basic = await s.account({ addon: false });
      const r = await postBatch([lead('R-9')], basic);
      expect(r.status).to.equal(403);
      expect(r.body.errors[0]).to.match(/^ACCESS_NOT_ENABLED: /);
      expect(await stored(basic)).to.deep.equal([]);
    });

    it('refuses a streamed body as soon as it passes MAX_BATCH_BYTES, before it is all sent', async () => {
      const url = new URL(`${s.url}${BATCH_PATH}?id=${a.scriptId}`);
      const total = 8 * 1024 * 1024;
      let sent = 0;
      const status = await new Promise<number>((resolve, reject) => {
        let answered = false;
        const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-access-token': a.token, 'transfer-encoding': 'chunked' } }, (res) => {
          answered = true;
          res.resume();
          resolve(res.statusCode!);
        });
        req.on('error', (e) => (answered ? undefined : reject(e)));
        const chunk = Buffer.from(`{"batch":[{"pad":"${'z'.repeat(16 * 1024)}`);
        const pump = () => {
          while (!answered && sent < total) {
            sent += chunk.length;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
          if (!answered) req.end();
        };
        pump();
      });
      expect(status).to.equal(413);
      expect(sent, 'refused long before the 8 MiB were sent').to.be.below(total);
    });
  });

  it('counts events against the account rate limit', async () => {
    const limited = await s.account();
    await s.accounts.update(limited.scriptId, { rateLimit: 5 }); // a burst of 10 events
    let r = await postBatch([lead('RL-1')], limited);
    expect(await waitFor(async () => {
      r = await postBatch(Array.from({ length: 9 }, () => lead(`RL-${randomBytes(4).toString('hex')}`)), limited);
      return r.status === 429;
    }, 3000)).to.equal(true);
    expect(r.body.errors[0]).to.match(/^RATE_LIMITED: More than 5 events per second/);
    expect(Number(r.headers.get('retry-after'))).to.be.at.least(1);
  });

  it('stores all of a batch or none of it when the commit fails, and answers 503 + Retry-After', async () => {
    const db = new Database(sqliteFile(s.config));
    db.exec(`CREATE TRIGGER fail_boom BEFORE INSERT ON events WHEN NEW.event_id = 'F-BOOM' BEGIN SELECT RAISE(ABORT, 'disk says no'); END`);
    try {
      const r = await postBatch([lead('F-1'), lead('F-2'), lead('F-BOOM'), lead('F-4')]);
      expect(r.status).to.equal(503);
      expect(r.headers.get('retry-after')).to.equal('5');
      expect(r.body.errors).to.deep.equal(['UNAVAILABLE: The service cannot store events right now; retry later']);
      expect((await stored()).filter((e) => e.eventId?.startsWith('F-'))).to.deep.equal([]);
    } finally {
      db.exec('DROP TRIGGER fail_boom');
      db.close();
    }
    const again = await postBatch([lead('F-1'), lead('F-2'), lead('F-BOOM'), lead('F-4')]);
    expect(again.body).to.include({ accepted: 4 });
  });

  it('is described in /openapi.json', async () => {
    const doc = (await (await fetch(`${s.url}/openapi.json`)).json()) as any;
    const op = doc.paths[BATCH_PATH].post;
    expect(op.requestBody.content['application/json'].schema.$ref).to.equal('#/components/schemas/BatchPayload');
    expect(op.responses['200'].content['application/json'].schema.$ref).to.equal('#/components/schemas/BatchResponse');
    expect(doc.components.schemas.BatchResult.properties.status.enum).to.deep.equal(['rejected', 'duplicate']);
  });

});

describe('batch intake: delivery', () => {
  let full: TestServer;
  let hook: DestinationDouble;
  before(async () => {
    // A full server, delivery on its own thread as `npm start` runs it.
    full = await startTestServer({ ALLOW_PRIVATE_DESTINATIONS: '1', DELIVERY_THREAD: '1' });
    hook = await startDestinationDouble();
  });
  after(async () => {
    await full.close();
    await hook.close();
  });

  it('delivers every accepted event of a batch to a webhook double, once each', async () => {
    const shop = await full.account();
    await full.running.store.destinations.add({ id: `dst_${randomBytes(8).toString('hex')}`, scriptId: shop.scriptId, type: 'webhook', name: 'hook', enabled: true, settings: SETTINGS.webhook(hook.url) });
    const ids = Array.from({ length: 6 }, (_, i) => `H-${i}`);
    const r = await full.post(BATCH_PATH, { batch: [...ids.map(lead), invalid, lead('H-0')] }, { account: shop });
    expect(r.body).to.include({ accepted: 6, rejected: 1, duplicates: 1 });
    await hook.waitFor(() => hook.requests.length >= 6, 10_000, 'six webhook deliveries');
    const got = hook.requests.map((q) => q.json().id);
    expect(got.sort()).to.deep.equal(ids);
  });
});
