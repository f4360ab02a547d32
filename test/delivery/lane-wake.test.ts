// A lane has one wake (src/delivery/lane-wake.ts) for the retries it recorded and its next
// look at the store: a retry further away than the lane's idle look (a second) is reached
// through the poll tick's looks, not a timer of its own beside them, and still goes out on
// time. Timers are seen as they are made (async_hooks, type 'Timeout', with the stack that
// made them); a timer's period and whether it is still armed are Node's `_idleTimeout` and
// `_destroyed`, read only here.
import { expect } from 'chai';
import { createHook } from 'node:async_hooks';
import { createRetryPolicy } from '../../src/delivery/retry-policy.ts';
import { waitFor } from '../helpers/test-server.ts';
import { checkout, useFixtureWithDouble } from './delivery-fixture.ts';

interface NodeTimeout { _idleTimeout: number; _destroyed: boolean }

describe('delivery: a lane wakes once for its retries and its looks at the store', function () {
  this.timeout(30_000);
  const t = useFixtureWithDouble();

  it('keeps no timer of its own further away than its idle look while a retry waits, and retries on time', async () => {
    const made: { timer: WeakRef<NodeTimeout>; stack: string }[] = [];
    const hook = createHook({
      init(_id, type, _trigger, resource) {
        if (type !== 'Timeout') return;
        const limit = Error.stackTraceLimit;
        Error.stackTraceLimit = 40;
        const stack = new Error().stack ?? '';
        Error.stackTraceLimit = limit;
        made.push({ timer: new WeakRef(resource as NodeTimeout), stack });
      },
    });
    /** Periods of the timers a lane made (src/delivery/lane*.ts) that are armed now. */
    const laneTimers = () => made.filter((m) => /src\/delivery\/lane[-.]/.test(m.stack))
      .map((m) => m.timer.deref()).filter((x): x is NodeTimeout => x !== undefined && !x._destroyed && x._idleTimeout > 0)
      .map((x) => x._idleTimeout);
    const scriptId = await t.f.account();
    await t.f.destination(scriptId, 'webhook', t.dbl.url);
    t.dbl.script({ status: 500 }, { status: 204 });
    await t.f.ingest(scriptId, checkout('ORD-WAKE-RETRY'));
    const d = t.f.dispatcher({ clock: Date.now, schedule: createRetryPolicy({ scheduleMs: [4_000], random: () => 0.5 }), pollMs: 50, pollMaxMs: 1_000, refreshMs: 1_000 });
    hook.enable();
    try {
      await d.start();
      expect(await waitFor(async () => (await t.f.store.deliveries.list({}))[0]?.attempts === 1, 5_000), 'first attempt refused and recorded').to.equal(true);
      const refusedAt = Date.now();
      // Until the retry (4 s after the refusal): every lane timer armed is at most a second away.
      while (t.dbl.requests.length < 2 && Date.now() - refusedAt < 3_000) {
        const periods = laneTimers();
        expect(periods.filter((ms) => ms > 1_000), `lane timers armed: ${periods.join(', ')} ms`).to.deep.equal([]);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(await waitFor(() => t.dbl.requests.length === 2, 5_000), 'retried').to.equal(true);
      expect(Date.now() - refusedAt, 'not before its time').to.be.at.least(3_500);
      expect(await waitFor(async () => (await t.f.store.deliveries.list({}))[0]?.status === 'delivered', 5_000), 'delivered on the retry').to.equal(true);
    } finally {
      hook.disable();
      await d.stop(1_000);
    }
  });
});
