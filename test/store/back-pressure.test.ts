// Back-pressure: the group-commit queue is bounded. With the store stuck, writes past the
// bound are refused at once (and intake turns that into 503 + Retry-After) instead of piling
// up in memory and timing out much later; once the store moves, the queue drains.
import { expect } from 'chai';
import { createGroupCommit, QueueFullError } from '../../src/store/group-commit.ts';
import { createEventWriter, MAX_PENDING_EVENTS } from '../../src/store/event-writer.ts';
import type { EventRecord, EventStatus, EventStore } from '../../src/store/types.ts';

describe('store: back-pressure', () => {
  it('refuses submits past maxQueue at once; the waiting ones commit when the store moves', async () => {
    let release!: () => void;
    const stuck = new Promise<void>((r) => (release = r));
    const committed: number[][] = [];
    const group = createGroupCommit(async (items: number[]) => {
      await stuck;
      committed.push(items);
      return items.map((i) => i * 10);
    }, { maxBatch: 2, maxQueue: 3 });
    const first = group.submit(1); // taken into the (stuck) first batch on the next turn
    await new Promise((r) => setImmediate(r));
    const waiting = [group.submit(2), group.submit(3), group.submit(4)];
    const t = Date.now();
    const refused = await group.submit(5).then(() => null, (e: unknown) => e);
    expect(refused).to.be.instanceOf(QueueFullError);
    expect(Date.now() - t, 'refused at once').to.be.below(100);
    release();
    expect(await first).to.equal(10);
    expect(await Promise.all(waiting)).to.deep.equal([20, 30, 40]);
    expect(committed).to.deep.equal([[1], [2, 3], [4]]);
    expect(await group.submit(6)).to.equal(60);
  });

  it('intake\'s event writer is bounded by default', async () => {
    expect(MAX_PENDING_EVENTS).to.equal(20_000);
    const never: EventStore = { append: () => new Promise<EventStatus[]>(() => undefined) } as unknown as EventStore;
    const writer = createEventWriter(never, { maxPending: 1 });
    const row = { id: 'x' } as EventRecord;
    void writer.write(row); // in the stuck batch
    await new Promise((r) => setImmediate(r));
    void writer.write(row); // waiting
    const err = await writer.write(row).then(() => null, (e: unknown) => e);
    expect(err).to.be.instanceOf(QueueFullError);
  });
});

describe('store: group commit keeps a group whole', () => {
  it('never splits a submitMany group across transactions, and still batches around it', async () => {
    const committed: number[][] = [];
    const group = createGroupCommit(async (items: number[]) => {
      committed.push(items);
      return items.map((i) => -i);
    }, { maxBatch: 3 });
    const one = group.submit(1);
    const many = group.submitMany([2, 3, 4, 5]);
    const two = group.submit(6);
    const more = group.submitMany([7, 8]);
    expect(await one).to.equal(-1);
    expect(await many).to.deep.equal([-2, -3, -4, -5]);
    expect(await two).to.equal(-6);
    expect(await more).to.deep.equal([-7, -8]);
    // 1 alone (2..5 would not fit), 2..5 alone although over maxBatch, then 6, 7, 8 together.
    expect(committed).to.deep.equal([[1], [2, 3, 4, 5], [6, 7, 8]]);
  });

  it('rejects every caller of a failed transaction and none of the next', async () => {
    let fail = true;
    const group = createGroupCommit(async (items: number[]) => {
      if (fail) { fail = false; throw new Error('disk full'); }
      return items;
    }, { maxBatch: 10 });
    const a = group.submitMany([1, 2]).then(() => 'ok', (e: Error) => e.message);
    const b = group.submit(3).then(() => 'ok', (e: Error) => e.message);
    expect(await a).to.equal('disk full');
    expect(await b).to.equal('disk full');
    expect(await group.submitMany([4])).to.deep.equal([4]);
  });
});

describe('store: group commit with concurrent transactions', () => {
  it('runs up to `concurrency` commits at once, each with the items queued when it started', async () => {
    const releases: (() => void)[] = [];
    let inFlight = 0;
    let most = 0;
    const committed: number[][] = [];
    const group = createGroupCommit(async (items: number[]) => {
      inFlight++;
      most = Math.max(most, inFlight);
      committed.push(items);
      await new Promise<void>((r) => releases.push(r));
      inFlight--;
      return items;
    }, { maxBatch: 100, concurrency: 2 });
    const a = group.submit(1);
    await new Promise((r) => setImmediate(r));
    const b = group.submitMany([2, 3]);
    await new Promise((r) => setImmediate(r));
    const c = group.submit(4); // both committers busy: waits
    await new Promise((r) => setImmediate(r));
    expect(committed).to.deep.equal([[1], [2, 3]]);
    releases.shift()!();
    expect(await a).to.equal(1);
    await new Promise((r) => setImmediate(r));
    expect(committed).to.deep.equal([[1], [2, 3], [4]]);
    while (releases.length > 0) releases.shift()!();
    expect(await b).to.deep.equal([2, 3]);
    expect(await c).to.equal(4);
    await group.drain();
    expect(most).to.equal(2);
  });
});

describe('store: group commit with a linger', () => {
  const turn = () => new Promise((r) => setImmediate(r));

  it('holds a batch across turns until it is full, then commits it at once', async () => {
    const committed: number[][] = [];
    const group = createGroupCommit(async (items: number[]) => {
      committed.push(items);
      return items.map((i) => i * 10);
    }, { maxBatch: 3, lingerMs: 60_000 });
    const a = group.submit(1);
    await turn();
    const b = group.submit(2);
    await turn();
    await turn();
    expect(committed).to.deep.equal([]); // a minute's linger: still waiting for more
    const c = group.submit(3); // full
    expect(await Promise.all([a, b, c])).to.deep.equal([10, 20, 30]);
    expect(committed).to.deep.equal([[1, 2, 3]]);
    await group.drain();
  });

  it('commits what it holds when the linger ends, and drain waits for it', async () => {
    const committed: number[][] = [];
    const group = createGroupCommit(async (items: number[]) => {
      committed.push(items);
      return items;
    }, { maxBatch: 100, lingerMs: 5 });
    void group.submit(1);
    await turn();
    void group.submit(2);
    await group.drain();
    expect(committed).to.deep.equal([[1, 2]]);
  });
});
