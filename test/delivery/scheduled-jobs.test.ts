// Scheduled jobs run directly (retention, dedup window, lease recovery, roll-up), on node-cron
// and (the roll-up) on the poll tick, and the delivery metrics they and the dispatcher feed.
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { registerDeliveryMetrics } from '../../src/delivery/delivery-metrics.ts';
import { createRetryPolicy } from '../../src/delivery/retry-policy.ts';
import { createScheduledJobs } from '../../src/delivery/scheduled-jobs.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { checkout, createFixture, type Fixture } from './delivery-fixture.ts';

const DAY = 86_400_000;
const silent = { info() {}, warn() {}, error() {} };

describe('delivery: scheduled jobs and metrics', function () {
  this.timeout(20_000);
  let f: Fixture;
  let dbl: DestinationDouble;
  let scriptId: string;

  beforeEach(async () => {
    f = await createFixture();
    dbl = await startDestinationDouble();
    scriptId = await f.account();
  });
  afterEach(async () => {
    await f.close();
    await dbl.close();
  });

  it('retention purge deletes old finished work only; the dedup purge only keys past the window', async () => {
    const dest = await f.destination(scriptId, 'ga4', dbl.url);
    dbl.otherwise((req) => ({ status: req.body.includes('OLD-STUCK') ? 503 : 204 }));
    f.clock.set(Date.now() - 40 * DAY);
    await f.ingest(scriptId, checkout('OLD-DONE'));
    await f.ingest(scriptId, checkout('OLD-STUCK'));
    const d = f.dispatcher({ schedule: createRetryPolicy({ scheduleMs: [DAY * 100] }) });
    await d.runOnce();
    f.clock.set(Date.now());
    await f.ingest(scriptId, checkout('NEW-DONE'));
    await d.runOnce();

    const jobs = createScheduledJobs({ store: f.store, logger: silent, clock: f.clock, retentionDays: 30, dedupWindowDays: 7 });
    expect(await jobs.purgeRetention(), 'both old attempts go, even the stuck one\'s').to.deep.equal({ events: 1, deliveries: 1, attempts: 2 });
    const left = await f.store.deliveries.list({ destinationId: dest.id });
    expect(left.map((x) => [x.eventId, x.status])).to.have.deep.members([['OLD-STUCK', 'pending'], ['NEW-DONE', 'delivered']]);
    expect(await f.store.events.list({ limit: 10 })).to.have.length(2);
    expect(await jobs.purgeDedup()).to.equal(2);
    expect(await f.store.events.isDuplicate(scriptId, 'checkout_completed', 'NEW-DONE', f.clock())).to.equal(true);
    expect(await f.store.events.isDuplicate(scriptId, 'checkout_completed', 'OLD-DONE', f.clock())).to.equal(false);
  });

  it('retention expires pending work of a destination disabled past retention, logs it, and purges it with its events', async () => {
    const dest = await f.destination(scriptId, 'ga4', dbl.url);
    dbl.otherwise(() => ({ status: 503 }));
    f.clock.set(Date.now() - 40 * DAY);
    await f.ingest(scriptId, checkout('OLD-PARKED'));
    const d = f.dispatcher({ schedule: createRetryPolicy({ scheduleMs: [DAY * 100] }) });
    await d.runOnce();
    f.clock.set(Date.now());
    await f.ingest(scriptId, checkout('NEW-PARKED'));
    await d.runOnce();
    // Fanned out while enabled, then the operator disabled it and never came back.
    await f.store.destinations.update(scriptId, dest.id, { enabled: false });
    expect((await f.store.deliveries.list({ destinationId: dest.id })).map((x) => x.status)).to.deep.equal(['pending', 'pending']);
    const lines: { msg: string; obj: Record<string, unknown> }[] = [];
    const logger = { ...silent, info: (obj: Record<string, unknown>, msg: string) => void lines.push({ obj, msg }) };
    const jobs = createScheduledJobs({ store: f.store, logger, clock: f.clock, retentionDays: 30, dedupWindowDays: 7 });
    expect(await jobs.purgeRetention()).to.deep.equal({ events: 1, deliveries: 1, attempts: 1 });
    expect(lines.find((l) => l.msg.startsWith('pending deliveries canceled'))?.obj).to.include({ removed: 0, expired: 1 });
    const left = await f.store.deliveries.list({ destinationId: dest.id });
    expect(left.map((x) => [x.eventId, x.status])).to.deep.equal([['NEW-PARKED', 'pending']]);
  });

  it('lease recovery clears expired leases; a live lease stays', async () => {
    const dest = await f.destination(scriptId, 'ga4', dbl.url);
    await f.ingest(scriptId, checkout('L-1'));
    await f.ingest(scriptId, checkout('L-2'));
    await f.dispatcher({ perDestinationConcurrency: 1 }).runOnce();
    await f.store.deliveries.replay({ statuses: ['delivered'] }, f.clock());
    await f.store.deliveries.claimDeliveries(dest.id, 'gone#1', f.clock(), f.clock() + 1_000, 1);
    await f.store.deliveries.claimDeliveries(dest.id, 'live#1', f.clock(), f.clock() + 60_000, 1);
    f.clock.advance(1_000);
    const jobs = createScheduledJobs({ store: f.store, logger: silent, clock: f.clock, retentionDays: 30, dedupWindowDays: 7 });
    expect(await jobs.recoverLeases()).to.equal(1);
    expect(await f.store.deliveries.leaseHolders()).to.deep.equal(['live#1']);
  });

  it('metrics: attempts by type and outcome, deliveries by state, lag, and the queue gauges from the roll-up', async () => {
    const registry = new Registry();
    const metrics = registerDeliveryMetrics(registry);
    await f.destination(scriptId, 'ga4', dbl.url);
    dbl.script({ status: 500 });
    await f.ingest(scriptId, checkout('M-1'));
    await f.ingest(scriptId, checkout('M-2'));
    await f.dispatcher({ metrics, perDestinationConcurrency: 1 }).runOnce();

    const text = await registry.metrics();
    expect(text).to.include('tracklane_delivery_attempts_total{destination_type="ga4",outcome="retryable"} 1');
    expect(text).to.include('tracklane_delivery_attempts_total{destination_type="ga4",outcome="success"} 1');
    expect(text).to.include('tracklane_deliveries_total{destination_type="ga4",status="retry"} 1');
    expect(text).to.include('tracklane_delivery_lag_seconds_count{destination_type="ga4"} 1');

    const jobs = createScheduledJobs({
      store: f.store, logger: silent, metrics, clock: f.clock, retentionDays: 30, dedupWindowDays: 7, rollUpMs: 1_000,
    });
    f.clock.advance(30_000);
    jobs.start();
    try {
      await until(async () => (await registry.metrics()).includes('tracklane_delivery_queue_depth{destination_type="ga4"} 1'), 5_000);
      const after = await registry.metrics();
      expect(after).to.include('tracklane_delivery_queue_depth{destination_type="ga4"} 1');
      expect(after).to.include('tracklane_delivery_oldest_pending_age_seconds{destination_type="ga4"} 30');
      expect(after).to.include('tracklane_dispatch_backlog_events 0');
    } finally {
      await jobs.stop();
    }
  });
});

describe('delivery: the scheduled roll-up', function () {
  this.timeout(60_000);
  let f: Fixture;
  before(async () => {
    f = await createFixture();
  });
  after(async () => {
    await f?.close();
  });

  // An idle delivery thread's tick slows (poll-tick.ts); a roll-up on a timer of its own
  // (node-cron every 15 s) woke it besides.
  it('runs from the poll tick, on no timer of its own', async () => {
    const stacks: string[] = [];
    const read = f.store.deliveries.queueSnapshot.bind(f.store.deliveries);
    f.store.deliveries.queueSnapshot = () => {
      stacks.push(new Error().stack ?? '');
      return read();
    };
    const jobs = createScheduledJobs({ store: f.store, logger: silent, clock: f.clock, retentionDays: 30, dedupWindowDays: 7 });
    jobs.start(); // reads once at once, then every ROLL_UP_MS
    try {
      await until(async () => stacks.length >= 2, 30_000);
      expect(stacks[1], 'the scheduled roll-up\'s stack').to.include('poll-tick.ts');
    } finally {
      await jobs.stop();
    }
  });
});

async function until(cond: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the scheduled roll-up');
    await new Promise((r) => setTimeout(r, 50));
  }
}
