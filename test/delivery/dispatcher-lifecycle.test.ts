// The dispatcher over time: a hanging destination does not slow another destination or
// another account; a destination failing past the (shrunk) window pauses and resumes; stop()
// finishes or hands back in-flight work; leases of a killed process are recovered at start.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { createRetryPolicy } from '../../src/delivery/retry-policy.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { STORE_KINDS, STORE_LABEL, storeHarness } from '../helpers/stores.ts';
import { waitFor } from '../helpers/test-server.ts';
import { checkout, createFixture, fakeClock, type Fixture } from './delivery-fixture.ts';

for (const kind of STORE_KINDS) describe(`delivery (${STORE_LABEL[kind]}): isolation, pause, shutdown and recovery`, function () {
  const harness = storeHarness(kind);
  this.timeout(20_000);
  let f: Fixture;
  const doubles: DestinationDouble[] = [];
  const double = async () => {
    const d = await startDestinationDouble();
    doubles.push(d);
    return d;
  };

  beforeEach(async () => {
    f = await createFixture({ open: () => harness.open() });
  });
  afterEach(async () => {
    await f.close();
    for (const d of doubles.splice(0)) await d.close();
  });

  it('one destination hanging does not hold up another destination or another account', async () => {
    const [accountA, accountB] = [await f.account(), await f.account()];
    const hanging = await double();
    const okA = await double();
    const okB = await double();
    hanging.otherwise({ hang: true });
    const hangingDest = await f.destination(accountA, 'webhook', hanging.url);
    await f.destination(accountA, 'ga4', okA.url);
    await f.destination(accountB, 'webhook', okB.url);
    const d = f.dispatcher({ clock: Date.now, sender: f.sender(10_000), perDestinationConcurrency: 4 });
    await d.start();

    for (let i = 0; i < 30; i++) {
      await f.ingest(accountA, checkout(`A-${i}`));
      await f.ingest(accountB, checkout(`B-${i}`));
    }
    await okA.waitFor(() => okA.requests.length === 30, 5_000, 'GA4 of account A');
    await okB.waitFor(() => okB.requests.length === 30, 5_000, 'webhook of account B');
    // Every request to the hanging receiver is still open: the others finished regardless.
    expect(hanging.requests).to.have.length(4);
    // Handed off, they have no rows at first; within about two seconds in their lane they are stored, leased, and show.
    const pendingRows = async () => (await f.store.deliveries.list({ destinationId: hangingDest.id, limit: 100 })).filter((p) => p.status === 'pending');
    await waitFor(async () => (await pendingRows()).length === 30, 5_000);
    expect(await pendingRows()).to.have.length(30);

    await d.stop(100);
    const released = await f.store.deliveries.claimDeliveries(hangingDest.id, 'check#1', Date.now(), Date.now() + 1_000, 100);
    expect(released, 'aborted sends are handed back, due now, not counted as attempts').to.have.length(30);
    expect(released.every((r) => r.attempts === 0)).to.equal(true);
  });

  it('pauses a destination failing with no success for the window, then resumes on `destinations update`', async () => {
    const scriptId = await f.account();
    const dbl = await double();
    dbl.otherwise({ status: 503 });
    const dest = await f.destination(scriptId, 'ga4', dbl.url);
    const d = f.dispatcher({ pauseAfterMs: 10_000, schedule: createRetryPolicy({ scheduleMs: Array(50).fill(1_000), random: () => 0.5 }) });
    await f.ingest(scriptId, checkout('P-1'));

    await d.runOnce(); // t0: failing since t0
    f.clock.advance(6_000);
    await d.runOnce(); // t0 + 6 s: still under the window
    expect((await f.store.deliveries.health(dest.id))?.pausedAt).to.equal(null);
    f.clock.advance(5_000);
    await d.runOnce(); // t0 + 11 s: paused
    const health = await f.store.deliveries.health(dest.id);
    expect(health?.pausedAt).to.equal(f.clock());
    expect(health?.pauseReason).to.match(/no success/);
    expect(dbl.requests).to.have.length(3);

    await f.ingest(scriptId, checkout('P-2'));
    f.clock.advance(60_000);
    await d.runOnce();
    expect(dbl.requests, 'no sends while paused').to.have.length(3);
    const list = await f.store.deliveries.list({ destinationId: dest.id });
    expect(list.map((x) => [x.eventId, x.status, x.paused])).to.have.deep.members([['P-1', 'pending', true], ['P-2', 'pending', true]]);
    const [stats] = await f.store.deliveries.stats(scriptId);
    expect(stats.counts.pending).to.equal(2);

    dbl.otherwise({ status: 204 });
    await f.store.destinations.update(scriptId, dest.id, { enabled: true });
    await d.runOnce();
    expect((await f.store.deliveries.list({ destinationId: dest.id })).map((x) => [x.status, x.paused])).to.deep.equal([['delivered', false], ['delivered', false]]);
    expect((await f.store.deliveries.health(dest.id))?.failingSince).to.equal(null);
  });

  it('one success before the window resets the failure clock', async () => {
    const scriptId = await f.account();
    const dbl = await double();
    const dest = await f.destination(scriptId, 'ga4', dbl.url);
    const d = f.dispatcher({ pauseAfterMs: 10_000, schedule: createRetryPolicy({ scheduleMs: Array(10).fill(1_000), random: () => 0.5 }) });
    dbl.script({ status: 500 }, { status: 200 }, { status: 500 }, { status: 500 });
    await f.ingest(scriptId, checkout('R-1'));
    await d.runOnce(); // fails at t0
    f.clock.advance(8_000);
    await f.ingest(scriptId, checkout('R-2'));
    await d.runOnce(); // R-1 succeeds at t0 + 8 s; R-2 fails
    f.clock.advance(8_000);
    await d.runOnce(); // t0 + 16 s: failing only since t0 + 8 s
    const health = await f.store.deliveries.health(dest.id);
    expect(health?.pausedAt).to.equal(null);
    expect(health?.failingSince).to.equal(f.clock() - 8_000);
  });

  it('`deliveries resume` semantics: un-pauses and makes the backlog due now', async () => {
    const scriptId = await f.account();
    const dbl = await double();
    dbl.otherwise({ status: 500 });
    const dest = await f.destination(scriptId, 'ga4', dbl.url);
    const d = f.dispatcher({ pauseAfterMs: 1, schedule: createRetryPolicy({ scheduleMs: [3_600_000, 3_600_000], random: () => 0.5 }) });
    await f.ingest(scriptId, checkout('S-1'));
    await d.runOnce();
    f.clock.advance(1_000);
    await f.ingest(scriptId, checkout('S-2'));
    await d.runOnce(); // S-2 fails a second after the first failure: paused
    expect((await f.store.deliveries.health(dest.id))?.pausedAt).to.be.a('number');
    dbl.otherwise({ status: 200 });
    expect(await f.store.deliveries.resume(dest.id, f.clock())).to.deep.equal({ wasPaused: true, due: 2 });
    await d.runOnce();
    expect((await f.store.deliveries.list({ destinationId: dest.id })).map((x) => x.status)).to.deep.equal(['delivered', 'delivered']);
  });

  it('stop() lets an in-flight send finish and records it', async () => {
    const scriptId = await f.account();
    const dbl = await double();
    dbl.otherwise({ status: 200, delayMs: 300 });
    const dest = await f.destination(scriptId, 'webhook', dbl.url);
    const d = f.dispatcher({ clock: Date.now });
    await d.start();
    await f.ingest(scriptId, checkout('T-1'));
    await dbl.waitFor(() => dbl.requests.length === 1, 5_000, 'the request');
    await d.stop(5_000);
    expect((await f.store.deliveries.list({ destinationId: dest.id }))[0]).to.include({ status: 'delivered', attempts: 1 });
  });

  it('leases of a killed process on this host are recovered at start, not after the lease', async () => {
    const scriptId = await f.account();
    const dbl = await double();
    const dest = await f.destination(scriptId, 'webhook', dbl.url);
    await f.ingest(scriptId, checkout('K-1'));
    await f.ingest(scriptId, checkout('K-2'));
    const deadPid = spawnSync(process.execPath, ['-e', '0']).pid!;
    const deadOwner = `${hostname()}/${deadPid}/dead01`;
    const clock = fakeClock(Date.now());
    // The dead process had fanned out K-1 and claimed its delivery, and had K-2 leased for fan-out.
    const first = await f.store.deliveries.claimEvents(`${deadOwner}#fan-out`, clock(), 3_600_000, 1);
    await f.store.deliveries.completeFanOut(`${deadOwner}#fan-out`, clock(), first.map((e) => ({
      seq: e.seq, scriptId, eventId: e.event.eventId, receivedAt: e.event.receivedAt,
      deliveries: [{ destinationId: dest.id, destinationType: 'webhook', status: 'pending' as const, part: 0, item: null }],
    })));
    expect(await f.store.deliveries.claimEvents(`${deadOwner}#fan-out`, clock(), 3_600_000, 1)).to.have.length(1);
    const held = await f.store.deliveries.claimDeliveries(dest.id, `${deadOwner}#1`, clock(), clock() + 3_600_000, 10);
    expect(held).to.have.length(1);
    // A live owner's lease is left alone.
    const liveOwner = `${hostname()}/${process.pid}/alive1`;
    // PostgreSQL leases the partition K-2 was read from to the owner itself (docs/fan-out-cursor-postgres.md).
    expect(await f.store.deliveries.leaseHolders()).to.have.members([kind === 'postgres' ? deadOwner : `${deadOwner}#fan-out`, `${deadOwner}#1`]);

    const d = f.dispatcher({ clock: Date.now, owner: liveOwner });
    await d.start();
    // K-1's row keeps no item (as a delivered row does): recovered, it is mapped again from its event.
    await dbl.waitFor(() => dbl.requests.length === 2, 5_000, 'K-2 delivered after its fan-out lease was recovered, and K-1 after its lease');
    const k1Status = async () => (await f.store.deliveries.list({ destinationId: dest.id })).find((r) => r.eventId === 'K-1')?.status;
    await waitFor(async () => (await k1Status()) !== 'pending', 5_000);
    expect(await k1Status(), 'K-1, mapped again from its stored event').to.equal('delivered');
    expect(dbl.requests.map((r) => r.json<{ id: string }>().id).sort()).to.deep.equal(['K-1', 'K-2']);
    for (const r of dbl.requests) expect(r.headers['webhook-id']).to.match(/^msg_[0-9a-f]{32}$/);
    await d.stop(1_000);
  });
});
