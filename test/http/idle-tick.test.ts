// The HTTP thread's poll tick slows when idle (http/idle-tick.ts; with the delivery thread, as
// npm start runs it): slowed while no connection is open, back on the second at the next one
// and kept there while it is open. Awaited and counted in ticks, never timed.
import { expect } from 'chai';
import { connect, type Socket } from 'node:net';
import { atNextTick, tickPeriod } from '../../src/poll-tick.ts';
import { startTestServer, waitFor, type TestServer } from '../helpers/test-server.ts';

const nextTick = () => new Promise<void>((r) => atNextTick(() => r()));

describe('HTTP thread: the poll tick when idle', function () {
  this.timeout(60_000);
  let s: TestServer | undefined;
  let k: Socket | undefined;
  after(async () => {
    k?.destroy();
    await s?.close();
  });

  it('slows while no connection is open, and is back on the second while one is', async () => {
    s = await startTestServer({ DELIVERY_THREAD: '1', TRACKLANE_IDLE_TICK: '{"idleTickMs":2000,"idleAfterTicks":2}' });
    expect(await waitFor(() => tickPeriod() === 2_000, 30_000), 'slowed with no connection open').to.equal(true);
    const { hostname, port } = new URL(s.url);
    k = await new Promise<Socket>((resolve, reject) => {
      const c = connect(Number(port), hostname, () => resolve(c));
      c.once('error', reject);
    });
    expect(await waitFor(() => tickPeriod() === 1_000, 10_000), 'back on the second').to.equal(true);
    for (let i = 0; i < 4; i++) {
      await nextTick();
      expect(tickPeriod(), `tick ${i + 1} with the connection open`).to.equal(1_000);
    }
  });
});
