// A failing store (disk full, database locked) must not make a lane spin: claims back off,
// doubling from 250 ms to 30 s with jitter, one log line per wait, and recover on success.
import { expect } from 'chai';
import { storeErrorBackoffMs, STORE_BACKOFF_MAX_MS } from '../../src/delivery/retry-policy.ts';
import type { Store } from '../../src/store/types.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { waitFor } from '../helpers/test-server.ts';
import { checkout, createFixture, type Fixture } from './delivery-fixture.ts';

describe('delivery: store errors back off', function () {
  this.timeout(20_000);

  it('the backoff doubles from 250 ms to a 30 s cap, within ±20 % jitter', () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4, 8, 9, 50].map((n) => storeErrorBackoffMs(n, mid))).to.deep.equal([250, 500, 1_000, 2_000, 30_000, 30_000, 30_000]);
    expect(storeErrorBackoffMs(1, () => 0)).to.equal(200);
    expect(storeErrorBackoffMs(60, () => 0.999999)).to.be.at.most(STORE_BACKOFF_MAX_MS * 1.2);
  });

  describe('a lane whose claims fail', () => {
    let f: Fixture;
    let dbl: DestinationDouble;
    beforeEach(async () => {
      f = await createFixture();
      dbl = await startDestinationDouble();
    });
    afterEach(async () => {
      await f.close();
      await dbl.close();
    });

    it('claims again only after each logged wait, then delivers once the store recovers', async () => {
      const scriptId = await f.account();
      await f.destination(scriptId, 'webhook', dbl.url);
      await f.ingest(scriptId, checkout('ORD-FULL'));
      let failing = true;
      let claims = 0;
      const deliveries = new Proxy(f.store.deliveries, {
        get(target, key, receiver) {
          if (key !== 'claimDeliveries') return Reflect.get(target, key, receiver);
          return async (...args: Parameters<Store['deliveries']['claimDeliveries']>) => {
            claims++;
            if (failing) throw new Error('SQLITE_FULL: database or disk is full');
            return target.claimDeliveries(...args);
          };
        },
      });
      const store = new Proxy(f.store, { get: (t, k, r) => (k === 'deliveries' ? deliveries : Reflect.get(t, k, r)) });
      const errors: Record<string, unknown>[] = [];
      const logger = { info() {}, warn() {}, error: (obj: object) => void errors.push(obj as Record<string, unknown>) };
      const d = f.dispatcher({ store, logger, clock: Date.now, refreshMs: 10_000 });
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
      expect(await waitFor(() => dbl.requests.length === 1, 5_000), 'delivered after recovery').to.equal(true);
      await d.stop(1_000);
    });
  });
});
