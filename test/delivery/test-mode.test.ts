// Test mode has one meaning: a destination with `test_event_code` never records a production
// conversion. Through the real dispatcher and loopback doubles: GA4 sends only to the
// validation server (/debug/mp/collect) and its validationMessages settle each event; Google
// Ads marks every upload validateOnly; a webhook goes out as usual with a `webhook-test`
// header. LinkedIn and Microsoft have no test mode: the code is refused when saved (admin API
// 400, CLI exit 2), and a config stored with one before is never sent to.
import { expect } from 'chai';
import { checkout, fixtureCli, useFixtureWithDouble } from './delivery-fixture.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { adminCall, TOKEN } from '../admin/admin-client.ts';
import { SETTINGS } from './delivery-fixture.ts';

const TEST_CODE = 'TEST-CODE-1';

describe('delivery: test mode never records a production conversion', function () {
  this.timeout(20_000);
  const t = useFixtureWithDouble();

  /** Three checkouts of one shopper: GA4 sends them in one request (one user envelope). */
  const sameShopper = (id: string) => checkout(id, { user: { id: 'cust-1', email: 'buyer@example.com' } });

  it('ga4: sends only to /debug/mp/collect (same query); an event GA4 calls invalid fails with its messages, the others are delivered', async () => {
    const scriptId = await t.f.account();
    const dest = await t.f.destination(scriptId, 'ga4', t.dbl.url, { test_event_code: TEST_CODE });
    // The validation server's documented answer for an invalid event, naming it by index.
    t.dbl.otherwise({ status: 200, body: { validationMessages: [{
      fieldPath: 'events', description: 'Event at index: [1] has invalid name [_bad]. Names must start with an alphabetic character.', validationCode: 'NAME_INVALID',
    }] } });
    for (const id of ['ORD-1', 'ORD-2', 'ORD-3']) await t.f.ingest(scriptId, sameShopper(id));
    await t.f.dispatcher().runOnce();

    expect(t.dbl.requests.map((r) => r.path)).to.deep.equal(['/debug/mp/collect?measurement_id=G-TEST123&api_secret=ga-secret']);
    expect(t.dbl.requests[0].json().events.map((e: any) => e.params.transaction_id)).to.deep.equal(['ORD-1', 'ORD-2', 'ORD-3']);
    const rows = await t.f.store.deliveries.list({ destinationId: dest.id, limit: 10 });
    const by = (id: string) => rows.find((r) => r.eventId === id)!;
    expect(by('ORD-1')).to.include({ status: 'delivered' });
    expect(by('ORD-3')).to.include({ status: 'delivered' });
    expect(by('ORD-2')).to.include({
      status: 'failed',
      lastError: 'GA4 validation failed: NAME_INVALID at events: Event at index: [1] has invalid name [_bad]. Names must start with an alphabetic character.',
    });
  });

  it('ga4: empty validationMessages deliver; a message about the request fails every event of it; never /mp/collect', async () => {
    const scriptId = await t.f.account();
    const dest = await t.f.destination(scriptId, 'ga4', t.dbl.url, { test_event_code: TEST_CODE });
    t.dbl.script(
      { status: 200, body: { validationMessages: [] } },
      { status: 200, body: { validationMessages: [{ fieldPath: 'client_id', description: 'client_id is required.', validationCode: 'VALUE_REQUIRED' }] } },
    );
    await t.f.ingest(scriptId, checkout('ORD-OK'));
    await t.f.dispatcher().runOnce();
    await t.f.ingest(scriptId, checkout('ORD-NO'));
    await t.f.dispatcher().runOnce();

    expect(t.dbl.requests.map((r) => r.path.split('?')[0])).to.deep.equal(['/debug/mp/collect', '/debug/mp/collect']);
    const rows = await t.f.store.deliveries.list({ destinationId: dest.id, limit: 10 });
    expect(rows.find((r) => r.eventId === 'ORD-OK')).to.include({ status: 'delivered' });
    expect(rows.find((r) => r.eventId === 'ORD-NO')).to.include({
      status: 'failed', lastError: 'GA4 validation failed: VALUE_REQUIRED at client_id: client_id is required.',
    });
  });

  it('google-ads: every upload, click conversions and retractions, carries validateOnly: true', async () => {
    const scriptId = await t.f.account();
    await t.f.destination(scriptId, 'google-ads', t.dbl.url, {
      test_event_code: TEST_CODE, conversion_actions: { checkout_completed: '1001', order_canceled: '1001' },
    });
    await t.f.ingest(scriptId, checkout('ORD-1', { context: { environment: 'prod', data_source: 'website', url: 'https://shop.example.com/thanks?gclid=Cj0KCQ-test' } }));
    await t.f.ingest(scriptId, { event: { name: 'order_canceled', id: 'ORD-0' }, context: { environment: 'prod', data_source: 'crm' }, consent: { analytics: true, marketing: true, personalization: true } });
    await t.f.dispatcher().runOnce();

    expect(t.dbl.requests.map((r) => r.path.split(':')[1]).sort()).to.deep.equal(['uploadClickConversions', 'uploadConversionAdjustments']);
    for (const r of t.dbl.requests) expect(r.json(), r.path).to.include({ partialFailure: true, validateOnly: true });
  });

  it('webhook: sent as usual, with a webhook-test header', async () => {
    const scriptId = await t.f.account();
    await t.f.destination(scriptId, 'webhook', t.dbl.url, { test_event_code: TEST_CODE });
    await t.f.ingest(scriptId, checkout('ORD-1'));
    await t.f.dispatcher().runOnce();

    expect(t.dbl.requests).to.have.length(1);
    expect(t.dbl.requests[0].path).to.equal('/hooks/orders');
    expect(t.dbl.requests[0].headers['webhook-test']).to.equal(TEST_CODE);
  });

  for (const type of ['linkedin', 'microsoft-ads']) {
    it(`${type}: a config stored with test_event_code (before it was refused) is never sent to; each event is skipped, no_test_mode`, async () => {
      const scriptId = await t.f.account();
      const dest = await t.f.destination(scriptId, type, t.dbl.url, { test_event_code: TEST_CODE });
      await t.f.ingest(scriptId, checkout('ORD-1'));
      await t.f.dispatcher().runOnce();

      expect(t.dbl.requests).to.have.length(0);
      const [row] = await t.f.store.deliveries.list({ destinationId: dest.id, limit: 10 });
      expect(row).to.include({ status: 'skipped', skipReason: 'no_test_mode', attempts: 0 });
      expect(row.lastError).to.contain(`${type}: test_event_code is set, but ${type} has no test mode`);
    });
  }

  it('linkedin and microsoft-ads: the CLI refuses test_event_code when the destination is saved, exit 2', async function () {
    this.timeout(60_000);
    const cli = fixtureCli(() => t.f);
    const scriptId = await t.f.account();
    for (const type of ['linkedin', 'microsoft-ads']) {
      const config = { ...SETTINGS[type]('https://api.example.com'), test_event_code: TEST_CODE };
      const r = await cli('destinations', 'add', scriptId, '--type', type, '--config', JSON.stringify(config));
      expect(r.code, r.stderr).to.equal(2);
      expect(r.stderr).to.match(new RegExp(`^tracklane: invalid ${type} config: test_event_code is refused: ${type} has no test mode \\(`));
      expect(r.stderr).to.contain('every event sent to it is recorded as a real conversion; remove test_event_code');
    }
    expect(await t.f.store.destinations.list(scriptId)).to.have.length(0);
  });
});

describe('admin API: test_event_code refused for linkedin and microsoft-ads', () => {
  let s: TestApp;
  before(async () => (s = await startTestApp({ ADMIN_TOKEN: TOKEN })));
  after(() => s.close());

  for (const type of ['linkedin', 'microsoft-ads']) {
    it(`${type}: adding or patching in a test_event_code answers 400 with the reason; nothing stored`, async () => {
      const acc = await s.account();
      const config = SETTINGS[type]('https://api.example.com');
      const added = await adminCall(s.url, 'POST', '/admin/destinations', { script_id: acc.scriptId, type, config: { ...config, test_event_code: TEST_CODE } });
      expect(added.status).to.equal(400);
      expect(added.body.error.message).to.match(new RegExp(`^invalid ${type} config: test_event_code is refused: ${type} has no test mode`));
      const ok = await adminCall(s.url, 'POST', '/admin/destinations', { script_id: acc.scriptId, type, config });
      expect(ok.status).to.equal(201);
      const patched = await adminCall(s.url, 'PATCH', `/admin/destinations/${ok.body.id}`, { config: { test_event_code: TEST_CODE } });
      expect(patched.status).to.equal(400);
      expect(patched.body.error.message).to.contain('test_event_code is refused');
      expect((await s.running.store.destinations.get(acc.scriptId, ok.body.id))!.settings).to.not.have.property('test_event_code');
    });
  }
});
