// A commit wakes the fan-out: with polling slowed to 30 s, a woken dispatcher still sends
// the new event at once; an unwoken one waits for its poll.
import { expect } from 'chai';
import { waitFor } from '../helpers/test-server.ts';
import { startDestinationDouble } from '../helpers/destination-double.ts';
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

  it('a commit that lands while a pass runs, after its claim read, is not missed: the loop passes again without waiting for the poll', async () => {
    const scriptId = await t.f.account();
    await t.f.destination(scriptId, 'webhook', t.dbl.url);
    const real = t.f.store.deliveries;
    let armed = false;
    let d: ReturnType<typeof t.f.dispatcher> | undefined;
    const deliveries = { ...real, claimEvents: async (...a: Parameters<typeof real.claimEvents>) => {
      const events = await real.claimEvents(...a);
      if (armed && events.length === 0) {
        // The claim read found nothing; the event commits now, and its wake arrives mid-pass.
        armed = false;
        await t.f.ingest(scriptId, checkout('ORD-MID-PASS'));
        d!.wake();
      }
      return events;
    } };
    d = t.f.dispatcher({ clock: Date.now, pollMs: 30_000, refreshMs: 30_000, store: { ...t.f.store, deliveries } });
    await d.start();
    armed = true;
    d.wake();
    expect(await waitFor(() => t.dbl.requests.length === 1, 5_000), 'sent without waiting for the 30 s poll').to.equal(true);
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

describe('delivery: the fan-out paces itself to its lanes', function () {
  this.timeout(30_000);
  const t = useFixtureWithDouble();

  /** The store with claimDeliveries counting the rows it hands out (deliveries that did not come by handoff). */
  const countingClaims = (real: typeof t.f.store.deliveries) => {
    const counter = { rows: 0 };
    const deliveries = { ...real, claimDeliveries: async (...a: Parameters<typeof real.claimDeliveries>) => {
      const rows = await real.claimDeliveries(...a);
      counter.rows += rows.length;
      return rows;
    } };
    return { counter, store: { ...t.f.store, deliveries } };
  };

  // The thread's idle time stands still (busy throughout), real time runs: pace-clock.ts.
  const busyThread = () => ({ wallMs: performance.now(), idleMs: 0 });

  /** 120 events to one webhook answering after `delayMs`, fanned out in batches of 20 with room for 32: every delivery must go by handoff. */
  async function allByHandoff(prefix: string, delayMs: number, opts: Partial<Parameters<typeof t.f.dispatcher>[0]>): Promise<void> {
    const scriptId = await t.f.account();
    await t.f.destination(scriptId, 'webhook', t.dbl.url);
    t.dbl.otherwise({ status: 200, body: {}, delayMs });
    for (let i = 0; i < 120; i++) await t.f.ingest(scriptId, checkout(`${prefix}-${i}`));
    const { counter, store } = countingClaims(t.f.store.deliveries);
    const d = t.f.dispatcher({ clock: Date.now, store, fanOutBatch: 20, handoffCap: 32, ...opts });
    await d.start();
    await t.dbl.waitFor(() => t.dbl.requests.length >= 4, 10_000, 'the first sends');
    expect(await t.f.store.deliveries.dispatchBacklog(), 'events still waiting in the dispatch queue').to.be.greaterThan(0);
    await t.dbl.waitFor(() => t.dbl.requests.length === 120, 20_000, 'all 120 sent');
    expect(await waitFor(async () => (await t.f.store.deliveries.list({ status: 'delivered', limit: 200 })).length === 120, 5_000)).to.equal(true);
    expect(counter.rows, 'deliveries claimed back by query instead of handed off').to.equal(0);
    await d.stop(1_000);
  }

  /** A hung webhook beside a healthy one, 120 events in batches of 20 with room for 32: the healthy one gets all 120. */
  async function hungBeside(prefix: string, opts: Partial<Parameters<typeof t.f.dispatcher>[0]>): Promise<void> {
    const scriptId = await t.f.account();
    const hung = await startDestinationDouble();
    try {
      hung.otherwise({ hang: true });
      await t.f.destination(scriptId, 'webhook', hung.url);
      await t.f.destination(scriptId, 'webhook', t.dbl.url);
      for (let i = 0; i < 120; i++) await t.f.ingest(scriptId, checkout(`${prefix}-${i}`));
      const d = t.f.dispatcher({ clock: Date.now, fanOutBatch: 20, handoffCap: 32, ...opts });
      await d.start();
      await t.dbl.waitFor(() => t.dbl.requests.length === 120, 20_000, 'all 120 sent to the healthy destination');
      // The hung lane's handed-off deliveries are stored (leased) within about two seconds; then their events leave the queue.
      await waitFor(async () => (await t.f.store.deliveries.dispatchBacklog()) === 0, 5_000);
      expect(await t.f.store.deliveries.dispatchBacklog(), 'every event fanned out').to.equal(0);
      await d.stop(200);
    } finally {
      await hung.close();
    }
  }

  it('waits while a lane has no room for a batch: events stay queued and every delivery goes by handoff', async () => {
    // Slower than the fan-out: it must wait for the lane again and again.
    await allByHandoff('ORD-PACE', 15, { pacePatienceMs: 60_000 });
  });

  it('does not wait for a lane that stays full: a hung destination never holds up another', async () => {
    await hungBeside('ORD-SLOW', { pacePatienceMs: 100 });
  });

  it('waits past the patience in real time while the thread is busy: a lane held up by the thread is not slow, so nothing is stored for it', async () => {
    // 20 deliveries, 8 at a time, 30 ms each: ~90 ms to free a batch's room, past a 40 ms patience of real time.
    await allByHandoff('ORD-BUSY', 30, { pacePatienceMs: 40, paceClock: busyThread });
  });

  it('while the thread is busy, a lane that keeps freeing room is waited for past the bound on real time: only a lane that frees none is hung', async () => {
    // Bound: 20 × 5 ms = 100 ms of real time; 20 deliveries, 8 at a time, 60 ms each: ~180 ms to free a batch's room, some every 60 ms.
    await allByHandoff('ORD-BUSY-PROGRESS', 60, { pacePatienceMs: 5, paceClock: busyThread });
  });

  it('however busy the thread, a lane that stays full is waited for a bounded time: a hung destination never holds up another', async () => {
    // Patience 20 ms of idle time that never comes; PACE_BUSY_PATIENCE_FACTOR × 20 ms of real time bounds the wait.
    await hungBeside('ORD-HUNG-BUSY', { pacePatienceMs: 20, paceClock: busyThread });
  });
});
