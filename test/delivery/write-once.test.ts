// Delivery bookkeeping written once on the happy path, on both stores: a delivery handed to a
// lane has no row until its attempt is recorded, which inserts it in its final state; the
// event leaves the dispatch queue once every handed-off delivery has a row. And what that
// promises when a process dies between send and record: the event is fanned out again, the
// delivery sent again with the same dedup key, and the row is never doubled.
import { expect } from 'chai';
import type { AttemptRecord, DeliveryStore, FanOutResult } from '../../src/delivery/types.ts';
import type { Store } from '../../src/store/types.ts';
import type { DestinationDouble } from '../helpers/destination-double.ts';
import { STORE_KINDS, STORE_LABEL, storeHarness } from '../helpers/stores.ts';
import { waitFor } from '../helpers/test-server.ts';
import { checkout, useFixtureWithDouble, type Fixture } from './delivery-fixture.ts';

for (const kind of STORE_KINDS) describe(`delivery (${STORE_LABEL[kind]}): bookkeeping written once`, function () {
  const harness = storeHarness(kind);
  this.timeout(20_000);
  const t = useFixtureWithDouble({ open: () => harness.open() });
  let f: Fixture;
  let dbl: DestinationDouble;
  let scriptId: string;

  beforeEach(async () => {
    ({ f, dbl } = t);
    scriptId = await f.account();
  });

  /** The store with its delivery methods wrapped: `over` replaces some, and every fan-out commit and attempt record is kept. */
  function spied(over: Partial<DeliveryStore> = {}) {
    const fanOuts: FanOutResult[] = [];
    const records: AttemptRecord[] = [];
    const real = f.store.deliveries;
    const deliveries: DeliveryStore = {
      ...real,
      completeFanOut: (claimId, now, results) => (fanOuts.push(...results), real.completeFanOut(claimId, now, results)),
      recordAttempts: (recs) => (records.push(...recs), real.recordAttempts(recs)),
      ...over,
    };
    return { store: { ...f.store, deliveries } as Store, fanOuts, records };
  }

  it('a delivered event costs one row per delivery, inserted by its attempt record in its final state, and leaves the queue', async () => {
    const dest = await f.destination(scriptId, 'webhook', dbl.url);
    const spy = spied();
    const d = f.dispatcher({ store: spy.store, clock: Date.now });
    await d.start();
    for (let i = 0; i < 20; i++) await f.ingest(scriptId, checkout(`W-${i}`));
    await dbl.waitFor(() => dbl.requests.length === 20, 10_000, 'all 20 sent');
    await waitFor(async () => (await f.store.deliveries.dispatchBacklog()) === 0, 10_000);
    await d.stop(1_000);

    const handed = spy.fanOuts.flatMap((r) => r.deliveries);
    expect(handed.map((x) => x.handoff), 'the fan-out stored no row: every delivery was handed off').to.deep.equal(Array(20).fill(true));
    const updates = spy.records.flatMap((r) => r.updates);
    expect(updates, 'one update per delivery').to.have.length(20);
    expect(updates.every((u) => u.row !== undefined && u.id < 0 && u.status === 'delivered'), 'each one the insert of a row not stored before').to.equal(true);
    const rows = await f.store.deliveries.list({ destinationId: dest.id, limit: 100 });
    expect(rows).to.have.length(20);
    expect(rows.every((r) => r.status === 'delivered' && r.attempts === 1 && r.item === null && r.lastStatusCode === 200)).to.equal(true);
    for (const r of rows.slice(0, 3)) expect((await f.store.deliveries.attempts(r.id)).map((a) => a.statusCode), 'linked to its attempt').to.deep.equal([200]);
    expect(await f.store.deliveries.dispatchBacklog(), 'every event left the queue').to.equal(0);
  });

  it('a process that dies between send and record: the event is fanned out again and sent again with the same webhook-id; one row, never two', async () => {
    const dest = await f.destination(scriptId, 'webhook', dbl.url);
    // Process A sends, but its records never commit (it is as good as dead from then on).
    let unblock!: () => void;
    const blocked = new Promise<void>((r) => (unblock = r));
    let committedByA = 0;
    let aClaims = true;
    const a = spied({ claimEvents: async (...args) => (aClaims ? f.store.deliveries.claimEvents(...args) : []), recordAttempts: async (recs) => {
      await blocked;
      const r = await f.store.deliveries.recordAttempts(recs);
      committedByA += recs.length;
      return r;
    } });
    const clock = f.clock;
    const dA = f.dispatcher({ store: a.store, clock, owner: 'host-a/1/aaaaaa', leaseMs: 30_000 });
    await dA.start();
    await f.ingest(scriptId, checkout('CRASH-1'));
    await dbl.waitFor(() => dbl.requests.length === 1, 10_000, 'sent by A');
    expect(await f.store.deliveries.list({ destinationId: dest.id }), 'no row yet: A has not recorded it').to.have.length(0);
    expect(await f.store.deliveries.dispatchBacklog(), 'the event is still queued, leased to A').to.equal(1);
    aClaims = false; // A is gone: it claims nothing more

    // A's leases end; process B finds the event and sends it again.
    clock.advance(31_000);
    const dB = f.dispatcher({ clock, owner: 'host-b/2/bbbbbb' });
    await dB.start();
    await dbl.waitFor(() => dbl.requests.length === 2, 10_000, 'sent again by B');
    const [first, second] = dbl.requests;
    expect(second.json<{ id: string }>().id).to.equal('CRASH-1');
    expect(second.headers['webhook-id'], 'the same dedup key').to.equal(first.headers['webhook-id']);
    await waitFor(async () => (await f.store.deliveries.dispatchBacklog()) === 0, 10_000);
    let rows = await f.store.deliveries.list({ destinationId: dest.id });
    expect(rows.map((r) => r.status)).to.deep.equal(['delivered']);

    // A's record finally commits: B's row is not A's, so nothing changes and nothing is added.
    unblock();
    await waitFor(() => committedByA > 0, 10_000);
    await dA.stop(1_000);
    rows = await f.store.deliveries.list({ destinationId: dest.id });
    expect(rows.map((r) => [r.status, r.attempts])).to.deep.equal([['delivered', 1]]);
    expect(dbl.requests, 'no third send').to.have.length(2);
    await dB.stop(1_000);
  });
});
