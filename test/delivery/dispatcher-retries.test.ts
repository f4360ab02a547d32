// The dispatcher over the real plugins, against loopback doubles, one pass at a time with
// an injected clock: retries, Retry-After, timeouts, permanent failures, redirects, and
// error codes inside a platform's reply body. Every attempt is on record.
import { expect } from 'chai';
import { createRetryPolicy } from '../../src/delivery/retry-policy.ts';
import type { DeliveryView } from '../../src/delivery/types.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { STORE_KINDS, STORE_LABEL, storeHarness } from '../helpers/stores.ts';
import { checkout, createFixture, type Fixture } from './delivery-fixture.ts';

for (const kind of STORE_KINDS) describe(`delivery (${STORE_LABEL[kind]}): dispatcher retries and classification`, function () {
  const harness = storeHarness(kind);
  this.timeout(20_000);
  let f: Fixture;
  let dbl: DestinationDouble;
  let scriptId: string;

  beforeEach(async () => {
    f = await createFixture({ open: () => harness.open() });
    dbl = await startDestinationDouble();
    scriptId = await f.account();
  });
  afterEach(async () => {
    await f.close();
    await dbl.close();
  });

  const only = async (destinationId: string): Promise<DeliveryView> => {
    const list = await f.store.deliveries.list({ destinationId });
    expect(list, 'one delivery').to.have.length(1);
    return list[0];
  };

  it('500, 500, 200 → delivered on the third attempt, each attempt recorded', async () => {
    const dest = await f.destination(scriptId, 'ga4', dbl.url);
    dbl.script({ status: 500, body: 'oops' }, { status: 500 }, { status: 204 });
    await f.ingest(scriptId, checkout('ORD-1'));
    const d = f.dispatcher({ schedule: createRetryPolicy({ scheduleMs: [1_000, 2_000], random: () => 0.5 }) });

    await d.runOnce();
    let del = await only(dest.id);
    expect(del).to.include({ status: 'pending', attempts: 1, lastStatusCode: 500, nextAttemptAt: f.clock() + 1_000 });
    expect(del.lastError).to.match(/HTTP 500/);

    await d.runOnce();
    expect(dbl.requests, 'not due yet').to.have.length(1);
    f.clock.advance(1_000);
    await d.runOnce();
    del = await only(dest.id);
    expect(del).to.include({ status: 'pending', attempts: 2, nextAttemptAt: f.clock() + 2_000 });

    f.clock.advance(2_000);
    await d.runOnce();
    del = await only(dest.id);
    expect(del).to.include({ status: 'delivered', attempts: 3, lastStatusCode: 204, lastError: null, nextAttemptAt: null, deliveredAt: f.clock() });
    expect(dbl.requests).to.have.length(3);
    expect(new Set(dbl.requests.map((r) => r.body)).size, 'the same payload every time').to.equal(1);

    const attempts = await f.store.deliveries.attempts(del.id);
    expect(attempts.map((a) => [a.statusCode, a.outcome, a.events])).to.deep.equal([[500, 'retryable', 1], [500, 'retryable', 1], [204, 'success', 1]]);
    expect(attempts[0].responseBody).to.equal('oops');
    for (const a of attempts) expect(a.latencyMs).to.be.a('number').and.at.least(0);
  });

  it('retryable failures past the schedule end dead', async () => {
    const dest = await f.destination(scriptId, 'ga4', dbl.url);
    dbl.otherwise({ status: 503 });
    await f.ingest(scriptId, checkout('ORD-2'));
    const d = f.dispatcher({ schedule: createRetryPolicy({ scheduleMs: [0, 0], random: () => 0.5 }) });
    await d.runOnce(); // zero delays: every attempt is due again within the same pass
    expect(await only(dest.id)).to.include({ status: 'dead', attempts: 3, lastStatusCode: 503, nextAttemptAt: null });
    expect(dbl.requests).to.have.length(3);
  });

  it('429 with Retry-After: honoured up to 1 h, never sooner than scheduled, and never under 60 s', async () => {
    const dest = await f.destination(scriptId, 'ga4', dbl.url);
    const d = f.dispatcher({ schedule: createRetryPolicy({ scheduleMs: [100_000, 100_000, 100_000, 1_000], random: () => 0.5 }) });
    await f.ingest(scriptId, checkout('ORD-3'));

    dbl.script({ status: 429, headers: { 'retry-after': '120' } });
    await d.runOnce();
    expect((await only(dest.id)).nextAttemptAt).to.equal(f.clock() + 120_000);

    f.clock.advance(120_000);
    dbl.script({ status: 429, headers: { 'retry-after': '86400' } });
    await d.runOnce();
    expect((await only(dest.id)).nextAttemptAt, 'a day is capped at the 1 h ceiling').to.equal(f.clock() + 3_600_000);

    f.clock.advance(3_600_000);
    dbl.script({ status: 429, headers: { 'retry-after': 'soon' } });
    await d.runOnce();
    expect((await only(dest.id)).nextAttemptAt, 'garbage ignored: the schedule').to.equal(f.clock() + 100_000);

    f.clock.advance(100_000);
    dbl.script({ status: 429 });
    await d.runOnce();
    expect((await only(dest.id)).nextAttemptAt, 'a 429 waits at least 60 s').to.equal(f.clock() + 60_000);
    expect(dbl.requests).to.have.length(4);
  });

  it('a hang times out, counts as an attempt (error class timeout), and is retried after ≥ 60 s', async () => {
    const dest = await f.destination(scriptId, 'ga4', dbl.url);
    dbl.script({ hang: true });
    await f.ingest(scriptId, checkout('ORD-4'));
    const d = f.dispatcher({ sender: f.sender(300), schedule: createRetryPolicy({ scheduleMs: [1_000], random: () => 0.5 }) });
    await d.runOnce();
    const del = await only(dest.id);
    expect(del).to.include({ status: 'pending', attempts: 1, lastStatusCode: null, nextAttemptAt: f.clock() + 60_000 });
    const [attempt] = await f.store.deliveries.attempts(del.id);
    expect(attempt).to.include({ errorClass: 'timeout', outcome: 'retryable', statusCode: null });
    expect(attempt.latencyMs).to.be.at.least(250);

    f.clock.advance(59_999);
    await d.runOnce();
    expect(dbl.requests).to.have.length(1);
    f.clock.advance(1);
    await d.runOnce();
    expect(await only(dest.id)).to.include({ status: 'delivered', attempts: 2 });
  });

  it('400 → failed at once, never retried', async () => {
    const dest = await f.destination(scriptId, 'ga4', dbl.url);
    dbl.script({ status: 400, body: { error: 'bad request' } });
    await f.ingest(scriptId, checkout('ORD-5'));
    const d = f.dispatcher();
    await d.runOnce();
    f.clock.advance(86_400_000);
    await d.runOnce();
    expect(await only(dest.id)).to.include({ status: 'failed', attempts: 1, lastStatusCode: 400, nextAttemptAt: null });
    expect(dbl.requests).to.have.length(1);
  });

  it('a 3xx fails the delivery and its Location is never visited', async () => {
    const elsewhere = await startDestinationDouble();
    try {
      const dest = await f.destination(scriptId, 'ga4', dbl.url);
      dbl.script({ status: 302, headers: { location: `${elsewhere.url}/mp/collect` } });
      await f.ingest(scriptId, checkout('ORD-6'));
      await f.dispatcher().runOnce();
      const del = await only(dest.id);
      expect(del).to.include({ status: 'failed', lastStatusCode: 302 });
      expect(del.lastError).to.match(/redirect/i);
      expect(elsewhere.requests).to.have.length(0);
    } finally {
      await elsewhere.close();
    }
  });

  it('Meta: a Graph error code in the body decides (code 100 → failed; transient → retried)', async () => {
    const dest = await f.destination(scriptId, 'meta-capi', dbl.url);
    dbl.script(
      { status: 400, body: { error: { message: 'Invalid parameter', type: 'OAuthException', code: 100, error_subcode: 2804003, fbtrace_id: 'A1' } } },
      { status: 200, body: { error: { message: 'Temporary issue', code: 2, is_transient: true } } },
    );
    await f.ingest(scriptId, checkout('ORD-7'));
    const d = f.dispatcher();
    await d.runOnce();
    const failed = await only(dest.id);
    expect(failed).to.include({ status: 'failed', lastStatusCode: 400 });
    expect(failed.lastError).to.match(/code 100/);

    await f.ingest(scriptId, checkout('ORD-8'));
    await d.runOnce();
    const [retried] = (await f.store.deliveries.list({ destinationId: dest.id, eventId: 'ORD-8' }));
    expect(retried).to.include({ status: 'pending', attempts: 1, lastStatusCode: 200 });
    expect(retried.lastError).to.match(/transient/);
  });

  it('TikTok: code 40002 inside a 200 → failed; 40100 (rate limit) → retried', async () => {
    const dest = await f.destination(scriptId, 'tiktok', dbl.url);
    dbl.script({ status: 200, body: { code: 40002, message: 'Invalid value for event' } }, { status: 200, body: { code: 40100, message: 'Too many requests' } });
    const d = f.dispatcher();
    await f.ingest(scriptId, checkout('ORD-9'));
    await d.runOnce();
    await f.ingest(scriptId, checkout('ORD-10'));
    await d.runOnce();
    const [first] = await f.store.deliveries.list({ destinationId: dest.id, eventId: 'ORD-9' });
    const [second] = await f.store.deliveries.list({ destinationId: dest.id, eventId: 'ORD-10' });
    expect(first).to.include({ status: 'failed', lastStatusCode: 200 });
    expect(first.lastError).to.match(/40002/);
    expect(second).to.include({ status: 'pending', attempts: 1 });
    expect(second.lastError).to.match(/40100/);
    f.clock.advance(1_000);
    await d.runOnce();
    expect((await f.store.deliveries.list({ destinationId: dest.id, eventId: 'ORD-10' }))[0].status).to.equal('delivered');
  });
});
