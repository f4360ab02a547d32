// The polls' shared tick (src/poll-tick.ts): what waits a whole number of seconds waits for
// the thread's one-second tick, other intervals keep a timer of their own, and the tick stops
// when nothing waits for it. test/idle-timers.test.ts has the whole server on it.
import { expect } from 'chai';
import { after, atNextTick, every, tickRunning, TICK_MS } from '../src/poll-tick.ts';
import { waitFor } from './helpers/test-server.ts';

describe('poll tick', function () {
  this.timeout(20_000);

  it('runs every-second and every-two-seconds polls and one-shot waits on the same ticks; a cancelled wait never runs; the tick stops when nothing waits', async () => {
    const runs: string[] = [];
    let tick = 0;
    // A one-shot that re-arms itself numbers the ticks, so each run says which tick it came in.
    const count = () => atNextTick(() => {
      tick++;
      if (tick < 3) count();
    });
    count();
    const stopA = every(TICK_MS, () => runs.push(`A@${tick}`));
    const stopB = every(2 * TICK_MS, () => runs.push(`B@${tick}`));
    after(TICK_MS, () => runs.push(`C@${tick}`));
    const cancelD = after(TICK_MS, () => runs.push(`D@${tick}`));
    cancelD();
    expect(await waitFor(() => tick >= 3 && runs.filter((r) => r.startsWith('A')).length >= 3, 10_000)).to.equal(true);
    stopA();
    stopB();
    // Each ran in the turn of the tick it counted: the counter ran first in each, so A of tick n reads n.
    expect(runs.slice(0, 5)).to.deep.equal(['A@1', 'C@1', 'A@2', 'B@2', 'A@3']);
    expect(await waitFor(() => !tickRunning(), 3 * TICK_MS)).to.equal(true);
  });

  it('keeps a timer of its own for a period that is not a whole number of ticks', async () => {
    let n = 0;
    const stop = every(30, () => n++);
    try {
      expect(await waitFor(() => n >= 3, 2_000)).to.equal(true);
      expect(tickRunning()).to.equal(false);
    } finally {
      stop();
    }
  });
});
