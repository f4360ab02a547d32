// The delivery thread's watchdog (DELIVERY_WATCHDOG_MS) does not wake an idle thread: a check
// that sees the thread's event loop idled since the last one (its loop's idle time, read from
// the main thread) takes that for an answer, and pings only a thread that did not idle (busy,
// or stuck: test/delivery/poison-event.test.ts has a stuck one ended). Counted over watchdog
// checks, never timed.
import { expect } from 'chai';
import { startTestServer, waitFor, type TestServer } from '../helpers/test-server.ts';

describe('delivery thread watchdog, idle', function () {
  this.timeout(60_000);
  let s: TestServer | undefined;
  after(async () => {
    await s?.close();
  });

  it('pings no idle thread over its checks', async () => {
    // Checks every second (a quarter of the bound).
    s = await startTestServer({ DELIVERY_THREAD: '1', DELIVERY_WATCHDOG_MS: '4000' });
    const thread = s.running.deliveryThread!;
    await thread.ready;
    // Armed (the thread has spoken), and past its start-up.
    expect(await waitFor(() => thread.watchdog.checks >= 3, 30_000), 'checked').to.equal(true);
    const { checks, pings } = thread.watchdog;
    expect(await waitFor(() => thread.watchdog.checks >= checks + 5, 30_000), 'five more checks').to.equal(true);
    expect(thread.watchdog.pings - pings, 'pings over five checks of an idle thread').to.equal(0);
    expect(thread.stalls).to.equal(0);
  });
});
