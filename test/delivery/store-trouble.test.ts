// A failing store (disk full, database locked) must not make a lane spin: claims back off,
// doubling from 250 ms to 30 s with jitter, one log line per wait, and recover on success.
import { expect } from 'chai';
import { storeErrorBackoffMs, STORE_BACKOFF_MAX_MS } from '../../src/delivery/retry-policy.ts';
import { createAttemptRecorder } from '../../src/delivery/attempt-recorder.ts';
import type { AttemptRecord } from '../../src/delivery/types.ts';
import type { Store } from '../../src/store/types.ts';
import { waitFor } from '../helpers/test-server.ts';
import { checkout, useFixtureWithDouble } from './delivery-fixture.ts';

describe('delivery: store errors back off', function () {
  this.timeout(20_000);

  it('the backoff doubles from 250 ms to a 5 s cap, within ±20 % jitter', () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4, 5, 6, 50].map((n) => storeErrorBackoffMs(n, mid))).to.deep.equal([250, 500, 1_000, 2_000, 4_000, 5_000, 5_000]);
    expect(storeErrorBackoffMs(1, () => 0)).to.equal(200);
    expect(storeErrorBackoffMs(60, () => 0.999999)).to.be.at.most(STORE_BACKOFF_MAX_MS * 1.2);
  });

  it('the attempt recorder tries a failed commit again, and gives up after RECORD_TRIES', async () => {
    let fails = 2;
    const calls: number[] = [];
    const waits: number[] = [];
    const store = {
      async recordAttempts(records: readonly AttemptRecord[]) {
        calls.push(records.length);
        if (fails-- > 0) throw new Error('connection terminated');
        return records.map(() => ({ applied: [1], paused: false }));
      },
    };
    const recorder = createAttemptRecorder(store, 256, { wait: async (ms) => void waits.push(ms) });
    const rec = { claimId: 'c#1', destinationId: 'd', at: 0, http: null, message: 'm', updates: [], pauseAfterMs: 0 } as AttemptRecord;
    expect(await recorder.record(rec)).to.deep.equal({ applied: [1], paused: false });
    expect(calls).to.deep.equal([1, 1, 1]);
    expect(waits).to.have.length(2);
    const never = createAttemptRecorder({ recordAttempts: async () => { throw new Error('down'); } }, 256, { tries: 3, wait: async () => undefined });
    expect(await never.record(rec).then(() => 'ok', (e: Error) => e.message)).to.equal('down');
  });

  describe('a lane whose claims fail', () => {
    const t = useFixtureWithDouble();

    it('claims again only after each logged wait, then delivers once the store recovers', async () => {
      const scriptId = await t.f.account();
      await t.f.destination(scriptId, 'webhook', t.dbl.url);
      await t.f.ingest(scriptId, checkout('ORD-FULL'));
      let failing = true;
      let claims = 0;
      const deliveries = new Proxy(t.f.store.deliveries, {
        get(target, key, receiver) {
          if (key !== 'claimDeliveries') return Reflect.get(target, key, receiver);
          return async (...args: Parameters<Store['deliveries']['claimDeliveries']>) => {
            claims++;
            if (failing) throw new Error('SQLITE_FULL: database or disk is full');
            return target.claimDeliveries(...args);
          };
        },
      });
      const store = new Proxy(t.f.store, { get: (target, k, r) => (k === 'deliveries' ? deliveries : Reflect.get(target, k, r)) });
      const errors: Record<string, unknown>[] = [];
      const logger = { info() {}, warn() {}, error: (obj: object) => void errors.push(obj as Record<string, unknown>) };
      const d = t.f.dispatcher({ store, logger, clock: Date.now, refreshMs: 10_000 });
      await d.start();
      expect(await waitFor(() => errors.length >= 3, 5_000), 'three failed claims').to.equal(true);
      failing = false;
      const backoff = errors.slice(0, 3).map((e) => [e.consecutive_failures, e.retry_in_ms]);
      expect(backoff.map((b) => b[0])).to.deep.equal([1, 2, 3]);
      const waits = backoff.map((b) => b[1] as number);
      expect(waits[0]).to.be.within(200, 300);
      expect(waits[1]).to.be.within(400, 600);
      expect(waits[2]).to.be.within(800, 1_200);
      expect(claims, 'one claim per logged failure: no spinning in between').to.equal(errors.length);
      expect(await waitFor(() => t.dbl.requests.length === 1, 5_000), 'delivered after recovery').to.equal(true);
      await d.stop(1_000);
    });
  });
});

describe('delivery: a receiver that answers 410 Gone', function () {
  this.timeout(20_000);
  const t = useFixtureWithDouble();

  it('pauses the destination visibly; its deliveries wait and go out after resume; other permanent failures (a 301) fail per event as before', async () => {
    const scriptId = await t.f.account();
    const hook = await t.f.destination(scriptId, 'webhook', t.dbl.url);
    t.dbl.script({ status: 410, body: 'gone' });
    t.dbl.otherwise({ status: 204 });
    await t.f.ingest(scriptId, checkout('ORD-G1'));
    const d = t.f.dispatcher({ perDestinationConcurrency: 1 });
    await d.runOnce();
    await t.f.ingest(scriptId, checkout('ORD-G2'));
    await d.runOnce();
    expect(t.dbl.requests, 'nothing more is sent once it said 410').to.have.length(1);
    const health = await t.f.store.deliveries.health(hook.id);
    expect(health?.pausedAt).to.be.a('number');
    expect(health?.pauseReason).to.match(/^the receiver answered 410 Gone/);
    const rows = await t.f.store.deliveries.list({ destinationId: hook.id });
    expect(rows.map((r) => [r.eventId, r.status, r.paused]).sort()).to.deep.equal([['ORD-G1', 'pending', true], ['ORD-G2', 'pending', true]]);
    expect((await t.f.store.deliveries.queueSnapshot()).pausedDestinations).to.equal(1);

    expect((await t.f.store.deliveries.resume(hook.id, t.f.clock())).wasPaused).to.equal(true);
    await d.runOnce();
    expect((await t.f.store.deliveries.list({ destinationId: hook.id })).map((r) => r.status)).to.deep.equal(['delivered', 'delivered']);

    t.dbl.script({ status: 301, body: 'moved' });
    await t.f.ingest(scriptId, checkout('ORD-G3'));
    await d.runOnce();
    const [bad] = await t.f.store.deliveries.list({ destinationId: hook.id, eventId: 'ORD-G3' });
    expect(bad.status).to.equal('failed');
    expect((await t.f.store.deliveries.health(hook.id))?.pausedAt, 'a 301 does not pause').to.equal(null);
  });
});
