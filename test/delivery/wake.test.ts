// A commit wakes the fan-out: with polling slowed to 30 s, a woken dispatcher still sends
// the new event at once; an unwoken one waits for its poll.
import { expect } from 'chai';
import { waitFor } from '../helpers/test-server.ts';
import { checkout, useFixtureWithDouble } from './delivery-fixture.ts';

describe('delivery: wake on commit', function () {
  this.timeout(20_000);
  const t = useFixtureWithDouble();

  it('wake() fans out a just-committed event without waiting for the poll', async () => {
    const scriptId = await t.f.account();
    await t.f.destination(scriptId, 'webhook', t.dbl.url);
    const d = t.f.dispatcher({ clock: Date.now, pollMs: 30_000, refreshMs: 30_000 });
    await d.start();
    await waitFor(async () => (await t.f.store.deliveries.dispatchBacklog()) === 0, 5_000);
    await t.f.ingest(scriptId, checkout('ORD-WAKE-0'));
    expect(await waitFor(() => t.dbl.requests.length > 0, 500), 'not before the poll without a wake').to.equal(false);
    d.wake();
    expect(await waitFor(() => t.dbl.requests.length === 1, 5_000), 'sent once woken').to.equal(true);
    await d.stop(1_000);
  });
});
