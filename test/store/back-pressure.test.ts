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
