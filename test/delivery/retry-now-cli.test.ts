// `tracklane deliveries retry-now`: after fixing a destination, waiting retries go out now
// instead of after their backoff. Through the real CLI on the dispatcher's database.
import { expect } from 'chai';
import { createRetryPolicy } from '../../src/delivery/retry-policy.ts';
import { checkout, fixtureCli, useFixtureWithDouble } from './delivery-fixture.ts';

describe('delivery: deliveries retry-now', function () {
  this.timeout(30_000);
  const t = useFixtureWithDouble();
  const cli = fixtureCli(() => t.f);

  it('makes a retry scheduled an hour out due now; the next dispatcher pass delivers it', async () => {
    const scriptId = await t.f.account();
    const dest = await t.f.destination(scriptId, 'ga4', t.dbl.url);
    const other = await t.f.destination(scriptId, 'webhook', t.dbl.url);
    t.dbl.otherwise({ status: 503 });
    await t.f.ingest(scriptId, checkout('ORD-R1'));
    const d = t.f.dispatcher({ schedule: createRetryPolicy({ scheduleMs: [3_600_000], random: () => 0.5 }) });
    await d.runOnce();
    const [waiting] = await t.f.store.deliveries.list({ destinationId: dest.id });
    expect(waiting).to.include({ status: 'pending', attempts: 1, nextAttemptAt: t.f.clock() + 3_600_000 });

    t.dbl.otherwise({ status: 204 }); // the operator fixed the destination
    // Without a scope it would act on every tenant: refused (as a bulk replay), nothing made due.
    for (const args of [[], ['--event-id', 'ORD-R1']]) {
      const unscoped = await cli('deliveries', 'retry-now', ...args, '--json');
      expect(unscoped.code, unscoped.stderr).to.equal(args.length === 0 ? 1 : 2);
      expect(unscoped.stderr).to.match(args.length === 0 ? /^tracklane: retry-now needs a scope: an account \(--account\) or a destination \(--destination\), or --all/ : /--event-id/);
    }
    expect((await t.f.store.deliveries.list({ destinationId: dest.id }))[0].nextAttemptAt).to.equal(waiting.nextAttemptAt);
    const unknown = await cli('deliveries', 'retry-now', '--destination', 'dst_nope');
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.contain('no destination "dst_nope"');
    const r = await cli('deliveries', 'retry-now', '--account', scriptId, '--destination', dest.id, '--json');
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout)).to.deep.equal({ due: 1 });
    const [due] = await t.f.store.deliveries.list({ destinationId: other.id });
    expect(due.nextAttemptAt, 'the other destination keeps its backoff').to.equal(t.f.clock() + 3_600_000);

    // The CLI used the wall clock; the fixture's clock is within a second of it.
    t.f.clock.set(Date.now() + 1_000);
    await d.runOnce();
    const [after] = await t.f.store.deliveries.list({ destinationId: dest.id });
    expect(after).to.include({ status: 'delivered', attempts: 2 });
    const human = await cli('deliveries', 'retry-now', '--all');
    expect(human.stdout).to.match(/^1 pending delivery waiting for a retry is due now/);
  });
});
