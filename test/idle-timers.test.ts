// An idle server wakes its threads about once a second, not every few milliseconds: once
// start-up is over, with nothing to do, it keeps no timer shorter than a second, and the
// timers of a second are at most two (the HTTP server's connection check and the polls'
// shared tick, src/poll-tick.ts). The server runs in this process with delivery on its main
// thread (the delivery thread runs the same dispatcher, lanes and rule watcher), with one
// account and one destination, so a send lane idles too. Timers are seen as they are made
// (async_hooks, type 'Timeout'); a timer's period and whether it is still armed are Node's
// `_idleTimeout` and `_destroyed`, read only here. The bench (`npm run bench:idle`) has the
// CPU this saves.
import { expect } from 'chai';
import { createHook } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { startTestServer, type TestServer } from './helpers/test-server.ts';
import { startDestinationDouble, type DestinationDouble } from './helpers/destination-double.ts';
import { SETTINGS } from './delivery/delivery-fixture.ts';

interface NodeTimeout { _idleTimeout: number; _destroyed: boolean; _repeat: number | null }

describe('an idle server', function () {
  this.timeout(60_000);
  let server: TestServer | undefined;
  let double: DestinationDouble | undefined;
  const made: WeakRef<NodeTimeout>[] = [];
  let tracking = true;
  const hook = createHook({
    init(_id, type, _trigger, resource) {
      if (type === 'Timeout' && tracking) made.push(new WeakRef(resource as NodeTimeout));
    },
  });
  /** The test's own waits are not the server's timers. */
  const pause = (ms: number) => {
    tracking = false;
    try {
      return new Promise((r) => setTimeout(r, ms));
    } finally {
      tracking = true;
    }
  };
  /** The server's timers armed now: their periods (ms), shortest first. */
  const armed = () => made.map((w) => w.deref()).filter((t): t is NodeTimeout => t !== undefined && !t._destroyed && t._idleTimeout > 0)
    .map((t) => t._idleTimeout).sort((a, b) => a - b);
  const quiet = (periods: number[]) => periods.every((ms) => ms >= 1_000) && periods.filter((ms) => ms === 1_000).length <= 2;
  const expectQuiet = (periods: number[]) => {
    expect(periods.filter((ms) => ms < 1_000), `timers shorter than a second among those armed: ${periods.join(', ')} ms`).to.deep.equal([]);
    expect(periods.filter((ms) => ms === 1_000), `timers of a second among those armed: ${periods.join(', ')} ms`).to.have.length.at.most(2);
  };

  after(async () => {
    hook.disable();
    await server?.close();
    await double?.close();
  });

  it('keeps no timer shorter than a second, and at most two of a second, also with an idle send lane', async () => {
    hook.enable();
    server = await startTestServer({ ALLOW_PRIVATE_DESTINATIONS: '1' });
    double = await startDestinationDouble();
    const account = await server.account();
    await server.running.store.destinations.add({
      id: `dst_${randomBytes(8).toString('hex')}`, scriptId: account.scriptId, type: 'webhook', name: 'idle', enabled: true, settings: SETTINGS.webhook(double.url),
    });
    // Start-up, the first fan-out passes backing off and the lane's first look at the store: over within seconds.
    let periods = armed();
    for (let i = 0; i < 100 && !quiet(periods); i++) {
      await pause(200);
      periods = armed();
    }
    expectQuiet(periods);
    // And it stays so: nothing comes back to poll faster.
    for (let i = 0; i < 5; i++) {
      await pause(400);
      expectQuiet(armed());
    }
    expect(server.running.delivery?.dispatcher, 'delivery runs in this thread').to.not.equal(undefined);
  });
});
