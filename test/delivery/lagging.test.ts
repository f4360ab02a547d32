// A destination slower than its traffic shows as lagging while nothing fails: a receiver that
// hangs (one slot, backlog stored behind it) gets tracklane_destination_lagging 1 with its
// overdue time and oldest pending age in the metrics the roll-up sets, and `stats` flags it,
// while the backlog grows; a destination that keeps up has no lagging series.
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { registerDeliveryMetrics } from '../../src/delivery/delivery-metrics.ts';
import { createScheduledJobs } from '../../src/delivery/scheduled-jobs.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { STORE_KINDS, STORE_LABEL, storeHarness } from '../helpers/stores.ts';
import { waitFor } from '../helpers/test-server.ts';
import { checkout, createFixture, fixtureCli, type Fixture } from './delivery-fixture.ts';

/** The work was stored this long ago (the dispatcher's clock); the roll-up and the CLI read the real time. */
const STORED_AGO_MS = 10 * 60_000;

const gauge = (text: string, name: string, destinationId: string): number | null => {
  const m = new RegExp(`^${name}\\{destination_id="${destinationId}",destination_type="webhook"\\} (\\S+)$`, 'm').exec(text);
  return m === null ? null : Number(m[1]);
};

for (const kind of STORE_KINDS) describe(`delivery (${STORE_LABEL[kind]}): a lagging destination is visible`, function () {
  const harness = storeHarness(kind);
  this.timeout(30_000);
  let f: Fixture;
  let hanging: DestinationDouble;
  let healthy: DestinationDouble;

  beforeEach(async () => {
    // SQLite: the fixture's own file, which the CLI reads too.
    f = await createFixture(kind === 'sqlite' ? {} : { open: () => harness.open() });
    [hanging, healthy] = [await startDestinationDouble(), await startDestinationDouble()];
  });
  afterEach(async () => {
    await f.close();
    await hanging.close();
    await healthy.close();
  });

  it('sets the lagging gauge, overdue time and oldest pending age, and stats flags it, while the backlog grows', async () => {
    f.clock.set(Date.now() - STORED_AGO_MS);
    const scriptId = await f.account();
    hanging.otherwise({ hang: true });
    const slow = await f.destination(scriptId, 'webhook', hanging.url, { max_concurrency: 1 });
    const fine = await f.destination(scriptId, 'webhook', healthy.url);
    const registry = new Registry();
    const jobs = createScheduledJobs({
      store: f.store, logger: { info() {}, warn() {}, error() {} }, metrics: registerDeliveryMetrics(registry),
      clock: Date.now, retentionDays: 30, dedupWindowDays: 30,
    });
    const d = f.dispatcher({ sender: f.sender(30_000), sendTimeoutMs: 30_000, handoffCap: 1, fanOutBatch: 5 });
    await d.start();
    let ingested = 0;
    const ingest = async (n: number) => {
      for (const end = ingested + n; ingested < end; ingested++) await f.ingest(scriptId, checkout(`ORD-${ingested}`));
      d.wake();
      // Fanned out: every event has its delivery row for the slow destination, and the healthy one got them all.
      const settled = await waitFor(async () => {
        const stats = await f.store.deliveries.stats(scriptId);
        const of = (id: string) => stats.find((s) => s.destinationId === id)!.counts;
        return of(slow.id).pending === ingested && of(fine.id).delivered === ingested;
      }, 15_000, 50);
      expect(settled, `${ingested} events fanned out`).to.equal(true);
    };

    await ingest(20);
    await hanging.waitFor(() => hanging.requests.length === 1, 10_000, 'the first request hanging');
    await jobs.rollUpStats();
    let text = await registry.metrics();
    expect(gauge(text, 'tracklane_destination_lagging', slow.id), 'lagging').to.equal(1);
    expect(gauge(text, 'tracklane_destination_overdue_seconds', slow.id), 'overdue').to.be.at.least(STORED_AGO_MS / 1000 - 5);
    expect(gauge(text, 'tracklane_destination_oldest_pending_age_seconds', slow.id), 'oldest pending age').to.be.at.least(STORED_AGO_MS / 1000 - 5);
    expect(gauge(text, 'tracklane_destination_lagging', fine.id), 'the healthy destination has nothing pending').to.equal(null);

    // The backlog grows; the state holds.
    await ingest(20);
    await jobs.rollUpStats();
    text = await registry.metrics();
    expect(gauge(text, 'tracklane_destination_lagging', slow.id), 'still lagging').to.equal(1);
    expect(hanging.requests, 'still one request in flight').to.have.length(1);
    const [stat] = (await f.store.deliveries.stats(scriptId)).filter((s) => s.destinationId === slow.id);
    expect(stat.counts).to.include({ pending: 40, failed: 0, dead: 0 });
    expect(stat.health?.failingSince ?? null, 'nothing has failed').to.equal(null);

    if (kind === 'sqlite') {
      const r = await fixtureCli(() => f)('stats', '--account', scriptId, '--json');
      expect(r.code, r.stderr).to.equal(0);
      const out = JSON.parse(r.stdout);
      expect(out.lagging_destinations).to.deep.equal([slow.id]);
      const row = out.destinations.find((x: { destination_id: string }) => x.destination_id === slow.id);
      expect(row).to.include({ lagging: true, paused: false });
      expect(row.overdue_seconds).to.be.at.least(STORED_AGO_MS / 1000 - 5);
      const table = await fixtureCli(() => f)('stats', '--account', scriptId);
      expect(table.stdout).to.match(new RegExp(`${slow.id}\\s+\\S+\\s+webhook\\s+LAGGING`));
    }
  });
});
