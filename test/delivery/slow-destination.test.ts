// A destination slower than its traffic: while new events keep arriving faster than it
// answers, its refused events are still retried and its oldest events go out before much
// newer ones (a lane fed only by handoffs used to starve what waited in the store); and a
// retry that comes due goes out before the newer first attempts its lane holds.
import { expect } from 'chai';
import { createRetryPolicy } from '../../src/delivery/retry-policy.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { STORE_KINDS, STORE_LABEL, storeHarness } from '../helpers/stores.ts';
import { waitFor } from '../helpers/test-server.ts';
import { checkout, createFixture, type Fixture } from './delivery-fixture.ts';

/** Requests the receiver answers while the load runs. */
const UNDER_LOAD = 200;
/** New events ingested per request the receiver gets: the intake always outruns it. */
const EVENTS_PER_REQUEST = 2;
const HANDOFF_CAP = 16;
const FAN_OUT_BATCH = 20;
/**
 * How far behind the newest attempted event an unattempted one may be: what a lane holds in
 * memory plus one fan-out batch and one claim, twice over. A lane that starves its store falls
 * behind by about half of everything ingested.
 */
const SLACK = 2 * (HANDOFF_CAP + FAN_OUT_BATCH + 8);

interface Seen {
  index: number;
  first: boolean;
}

for (const kind of STORE_KINDS) describe(`delivery (${STORE_LABEL[kind]}): a destination slower than its traffic`, function () {
  const harness = storeHarness(kind);
  this.timeout(90_000);
  let f: Fixture;
  let dbl: DestinationDouble;

  beforeEach(async () => {
    f = await createFixture({ open: () => harness.open() });
    dbl = await startDestinationDouble();
  });
  afterEach(async () => {
    await f.close();
    await dbl.close();
  });

  it('retries refused events and attempts the oldest events first while new ones keep arriving', async () => {
    const scriptId = await f.account();
    await f.destination(scriptId, 'webhook', dbl.url);
    const indexOf = new Map<string, number>();
    const seen: Seen[] = [];
    const attempted = new Set<string>();
    let loading = true;
    let credit = 0;
    let wakeLoad: (() => void) | undefined;
    // 50 ms per answer while loaded; every fifth event's first attempt is refused.
    dbl.otherwise((req) => {
      const id = String(req.json<{ id: string }>().id);
      const index = indexOf.get(id)!;
      const first = !attempted.has(id);
      attempted.add(id);
      if (loading) {
        seen.push({ index, first });
        credit += EVENTS_PER_REQUEST;
        wakeLoad?.();
      }
      return { status: first && index % 5 === 4 ? 500 : 200, body: {}, delayMs: loading ? 50 : 0 };
    });
    const d = f.dispatcher({
      clock: Date.now, perDestinationConcurrency: 2, handoffCap: HANDOFF_CAP, fanOutBatch: FAN_OUT_BATCH,
      schedule: createRetryPolicy({ scheduleMs: [300, 300], random: () => 0.5 }),
    });
    let ingested = 0;
    const ingest = async (n: number) => {
      for (let i = 0; i < n; i++, ingested++) {
        indexOf.set(`ORD-${ingested}`, ingested);
        await f.ingest(scriptId, checkout(`ORD-${ingested}`));
      }
      d.wake(); // as an intake commit does
    };
    await ingest(FAN_OUT_BATCH);
    await d.start();
    // Steady load tied to the receiver's progress, so it outruns it on any machine.
    while (seen.length < UNDER_LOAD) {
      if (credit === 0) await new Promise<void>((r) => (wakeLoad = r));
      wakeLoad = undefined;
      const n = credit;
      credit = 0;
      await ingest(n);
    }
    loading = false;
    const during = seen.slice(0, UNDER_LOAD);

    const refused = (s: Seen) => s.first && s.index % 5 === 4;
    const retried = new Set(during.filter((s) => !s.first).map((s) => s.index));
    const refusedEarly = during.slice(0, UNDER_LOAD / 4).filter(refused).map((s) => s.index);
    expect(refusedEarly, 'events refused in the first quarter').to.not.be.empty;
    expect(refusedEarly.filter((i) => !retried.has(i)), 'refused in the first quarter, not retried while the load ran').to.deep.equal([]);

    const firstAttempts = new Set(during.filter((s) => s.first).map((s) => s.index));
    const newest = Math.max(...firstAttempts);
    const skipped = Array.from({ length: Math.max(0, newest - SLACK) }, (_, i) => i).filter((i) => !firstAttempts.has(i));
    expect(skipped, `events never attempted while one ${SLACK}+ newer was (newest attempted #${newest} of ${ingested})`).to.deep.equal([]);

    // Nothing lost: once the load stops, every event is delivered.
    const all = await waitFor(async () => (await f.store.deliveries.list({ status: 'delivered', limit: ingested + 1 })).length === ingested, 30_000, 100);
    expect(all, `all ${ingested} events delivered after the load`).to.equal(true);
    await d.stop(1_000);
  });

  it('a retry that comes due while the lane holds a backlog goes out before every newer first attempt', async () => {
    const RETRY_MS = 200;
    const scriptId = await f.account();
    const dest = await f.destination(scriptId, 'webhook', dbl.url);
    // One slot. ORD-A's first attempt is refused; every other first attempt is held until the
    // retry is due and claimed, so the lane has a backlog of newer first attempts meanwhile.
    let letGo!: () => void;
    const held = new Promise<void>((r) => (letGo = r));
    const seen: string[] = [];
    dbl.otherwise((req) => {
      const id = String(req.json<{ id: string }>().id);
      const first = !seen.includes(id);
      seen.push(id);
      if (id === 'ORD-A' && first) return { status: 503, body: {} };
      return { status: 200, body: {}, ...(first ? { until: held } : {}) };
    });
    for (const id of ['ORD-A', ...Array.from({ length: 8 }, (_, i) => `ORD-${i}`)]) await f.ingest(scriptId, checkout(id));
    const d = f.dispatcher({ clock: Date.now, perDestinationConcurrency: 1, schedule: createRetryPolicy({ scheduleMs: [RETRY_MS], random: () => 0.5 }) });
    await d.start();
    await dbl.waitFor(() => seen.length === 2, 10_000, 'the refusal, then a held first attempt');
    expect(seen).to.deep.equal(['ORD-A', 'ORD-0']);
    const refusedRow = async () => (await f.store.deliveries.list({ destinationId: dest.id, eventId: 'ORD-A' }))[0];
    expect(await waitFor(async () => (await refusedRow())?.attempts === 1, 5_000, 20), 'the refusal recorded').to.equal(true);
    const due = (await refusedRow()).nextAttemptAt!;
    // Claimed once due: leased, its next attempt time is its lease end. Not waited for past a few seconds.
    await waitFor(async () => {
      const a = await refusedRow();
      return Date.now() > due && a.nextAttemptAt !== null && a.nextAttemptAt > due;
    }, RETRY_MS + 5_000, 20);
    letGo();
    await dbl.waitFor(() => seen.length >= 3, 10_000, 'the next request');
    expect(seen.slice(0, 3), 'the retry before the lane\'s newer first attempts').to.deep.equal(['ORD-A', 'ORD-0', 'ORD-A']);
    await dbl.waitFor(() => seen.length === 10, 10_000, 'everything');
    expect(seen.slice(3)).to.deep.equal(Array.from({ length: 7 }, (_, i) => `ORD-${i + 1}`));
    await d.stop(1_000);
  });
});
