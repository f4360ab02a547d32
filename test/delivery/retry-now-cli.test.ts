// `tracklane deliveries retry-now`: after fixing a destination, waiting retries go out now
// instead of after their backoff. Through the real CLI on the dispatcher's database.
import { expect } from 'chai';
import { createRetryPolicy } from '../../src/delivery/retry-policy.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { checkout, createFixture, fixtureCli, type Fixture } from './delivery-fixture.ts';

describe('delivery: deliveries retry-now', function () {
  this.timeout(30_000);
  let f: Fixture;
  let ga: DestinationDouble;
  const cli = fixtureCli(() => f);

  beforeEach(async () => {
    f = await createFixture();
    ga = await startDestinationDouble();
  });
  afterEach(async () => {
    await f.close();
    await ga.close();
  });

  it('makes a retry scheduled an hour out due now; the next dispatcher pass delivers it', async () => {
    const scriptId = await f.account();
    const dest = await f.destination(scriptId, 'ga4', ga.url);
    const other = await f.destination(scriptId, 'webhook', ga.url);
    ga.otherwise({ status: 503 });
    await f.ingest(scriptId, checkout('ORD-R1'));
    const d = f.dispatcher({ schedule: createRetryPolicy({ scheduleMs: [3_600_000], random: () => 0.5 }) });
    await d.runOnce();
    const [waiting] = await f.store.deliveries.list({ destinationId: dest.id });
    expect(waiting).to.include({ status: 'pending', attempts: 1, nextAttemptAt: f.clock() + 3_600_000 });

    ga.otherwise({ status: 204 }); // the operator fixed the destination
    const unknown = await cli('deliveries', 'retry-now', '--destination', 'dst_nope');
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.contain('no destination "dst_nope"');
    const r = await cli('deliveries', 'retry-now', '--account', scriptId, '--destination', dest.id, '--json');
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout)).to.deep.equal({ due: 1 });
    const [due] = await f.store.deliveries.list({ destinationId: other.id });
    expect(due.nextAttemptAt, 'the other destination keeps its backoff').to.equal(f.clock() + 3_600_000);

    // The CLI used the wall clock; the fixture's clock is within a second of it.
    f.clock.set(Date.now() + 1_000);
    await d.runOnce();
    const [after] = await f.store.deliveries.list({ destinationId: dest.id });
    expect(after).to.include({ status: 'delivered', attempts: 2 });
    const human = await cli('deliveries', 'retry-now');
    expect(human.stdout).to.match(/^1 pending delivery waiting for a retry is due now/);
  });
});
