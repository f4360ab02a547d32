// Event ids that HTTP headers cannot carry must never stall a delivery: every plugin gets an
// order with a non-Latin-1 id and one with the longest valid id (128 characters) through
// the real delivery path, and each is delivered at the first attempt. Longer ids are refused
// at intake with a coded error.
import { expect } from 'chai';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { startTestApp } from '../helpers/test-app.ts';
import { checkout, useFixtureWithDouble } from './delivery-fixture.ts';

const IDS = ['订单-1', `ORD-${'9'.repeat(124)}`];

describe('delivery: awkward event ids', function () {
  this.timeout(20_000);
  const t = useFixtureWithDouble();

  it('every plugin delivers a non-Latin-1 id and a 128-character id at the first attempt', async () => {
    const scriptId = await t.f.account();
    const dests = [];
    for (const type of ['ga4', 'meta-capi', 'tiktok', 'webhook']) dests.push(await t.f.destination(scriptId, type, t.dbl.url));
    for (const id of IDS) await t.f.ingest(scriptId, checkout(id));
    await t.f.dispatcher().runOnce();
    for (const d of dests) {
      const rows = await t.f.store.deliveries.list({ destinationId: d.id, limit: 10 });
      expect(rows.map((r) => [r.eventId, r.status, r.attempts]).sort(), d.type).to.deep.equal(IDS.map((id) => [id, 'delivered', 1]).sort());
    }
    for (const r of t.dbl.requests) {
      for (const [name, value] of Object.entries(r.headers)) {
        expect(String(value), `header ${name}`).to.match(/^[\t\x20-\x7e]*$/);
      }
    }
  });

  it('a 300-character id is refused at intake with a coded error, never stored as accepted', async () => {
    const s = await startTestApp();
    try {
      const account = await s.account();
      const r = await s.post('/service/standard/event', checkout('x'.repeat(300)), { account });
      expect(r.status).to.equal(400);
      expect(r.body.errors[0]).to.include({ field: 'event.id', code: 'INVALID_FORMAT' });
      await s.post(INTAKE_PATHS.event, checkout('y'.repeat(300)), { account });
      const [row] = await s.running.store.events.list({ scriptId: account.scriptId, limit: 5 });
      expect(row.status).to.equal('rejected');
    } finally {
      await s.close();
    }
  });
});
