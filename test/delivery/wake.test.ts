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

  it('a running lane takes what the fan-out commits for it straight from memory: no claim query finds it', async () => {
    const scriptId = await t.f.account();
    await t.f.destination(scriptId, 'webhook', t.dbl.url);
    let claimedByQuery = 0;
    const real = t.f.store.deliveries;
    const deliveries = { ...real, claimDeliveries: async (...a: Parameters<typeof real.claimDeliveries>) => {
      const rows = await real.claimDeliveries(...a);
      claimedByQuery += rows.length;
      return rows;
    } };
    const d = t.f.dispatcher({ clock: Date.now, store: { ...t.f.store, deliveries } });
    await d.start();
    for (let i = 0; i < 10; i++) await t.f.ingest(scriptId, checkout(`ORD-HAND-${i}`));
    d.wake();
    expect(await waitFor(async () => (await real.list({ status: 'delivered' })).length === 10, 5_000), 'all ten delivered and recorded').to.equal(true);
    expect(t.dbl.requests).to.have.length(10);
    expect(claimedByQuery, 'deliveries claimed by query').to.equal(0);
    await d.stop(1_000);
  });
});
