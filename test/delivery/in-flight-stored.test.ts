// A handed-off delivery still in its lane after about a second is stored, pending and leased
// (src/delivery/lane-in-flight.ts), while its request is being sent; the lane notes that in
// its state, not on the delivery. When the answer comes, the attempt's record updates that
// row by its id under the claim: one row, delivered, one attempt, and the event leaves the
// dispatch queue.
import { expect } from 'chai';
import { waitFor } from '../helpers/test-server.ts';
import { checkout, useFixtureWithDouble } from './delivery-fixture.ts';

describe('delivery: a handed-off delivery stored while its request is in flight', function () {
  this.timeout(20_000);
  const t = useFixtureWithDouble();

  it('is recorded on its stored row when the slow answer comes: one row, delivered, one attempt, the event out of the queue', async () => {
    const scriptId = await t.f.account();
    const dest = await t.f.destination(scriptId, 'webhook', t.dbl.url);
    t.dbl.script({ status: 200, delayMs: 3_000 });
    const d = t.f.dispatcher({ clock: Date.now, sender: t.f.sender(10_000), sendTimeoutMs: 10_000 });
    await d.start();
    await t.f.ingest(scriptId, checkout('ORD-SLOW-1'));
    d.wake();
    const rows = () => t.f.store.deliveries.list({ destinationId: dest.id });
    expect(await waitFor(async () => (await rows()).some((r) => r.status === 'pending'), 5_000), 'stored, pending, while the request waits for its answer').to.equal(true);
    expect(t.dbl.requests, 'sent once, not answered yet').to.have.length(1);
    expect(await waitFor(async () => (await rows())[0]?.status === 'delivered', 10_000), 'delivered once answered').to.equal(true);
    const [row] = await rows();
    expect(await rows(), 'one row').to.have.length(1);
    expect(row.attempts).to.equal(1);
    expect(await t.f.store.deliveries.attempts(row.id), 'the attempt is on that row').to.have.length(1);
    expect(await waitFor(async () => (await t.f.store.deliveries.dispatchBacklog()) === 0, 5_000), 'the event left the dispatch queue').to.equal(true);
    expect(t.dbl.requests, 'never sent again').to.have.length(1);
    await d.stop(1_000);
  });
});
