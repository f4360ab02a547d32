// A poll that announcements stand in for (src/announced-poll.ts): every tick while the
// announcer cannot be heard, only at announcements while it can, and every tick again once it
// is lost.
import { expect } from 'chai';
import { everyUnlessAnnounced } from '../src/announced-poll.ts';
import { atNextTick, every, slowWhenIdle, stopSlowing, tickPeriod, TICK_MS } from '../src/poll-tick.ts';
import { waitFor } from './helpers/test-server.ts';

describe('announced poll', function () {
  this.timeout(20_000);

  it('polls every tick until the announcer is heard, then only when it announces, and every tick again once it is lost', async () => {
    let hearing = false;
    let announce: (() => void) | undefined;
    let polls = 0;
    let ticks = 0;
    const countTicks = every(TICK_MS, () => ticks++);
    const stop = everyUnlessAnnounced(TICK_MS, (fn) => {
      if (!hearing) return null;
      announce = fn;
      return () => (announce = undefined);
    }, () => polls++, 60 * TICK_MS);
    try {
      expect(await waitFor(() => polls >= 2, 5_000), 'polled while not heard').to.equal(true);
      hearing = true;
      expect(await waitFor(() => announce !== undefined, 5_000), 'watching').to.equal(true);
      const heardAt = polls;
      const t0 = ticks;
      expect(await waitFor(() => ticks >= t0 + 3, 10_000)).to.equal(true);
      expect(polls, 'one poll when it started hearing, none on the ticks after').to.be.at.most(heardAt + 1);
      const quiet = polls;
      announce!();
      expect(polls, 'an announcement polls at once').to.equal(quiet + 1);
      expect(announce, 'and watches again').to.not.equal(undefined);
      // Lost: the announcer calls back once more and cannot be heard any longer.
      hearing = false;
      announce!();
      const lostAt = polls;
      expect(await waitFor(() => polls >= lostAt + 2, 5_000), 'polls every tick again').to.equal(true);
    } finally {
      stop();
      countTicks();
    }
  });

  it('while heard, still polls every heardPollMs (a connection lost without a word)', async () => {
    let polls = 0;
    let ticks = 0;
    const countTicks = every(TICK_MS, () => ticks++);
    const stop = everyUnlessAnnounced(TICK_MS, () => () => undefined, () => polls++, 3 * TICK_MS);
    try {
      // Heard from the first tick: its poll, then one every third tick.
      expect(await waitFor(() => polls >= 1, 5_000)).to.equal(true);
      const [p0, t0] = [polls, ticks];
      expect(await waitFor(() => ticks >= t0 + 6, 15_000)).to.equal(true);
      expect(polls - p0, 'about two polls in six ticks').to.be.within(1, 3);
    } finally {
      stop();
      countTicks();
    }
  });

  it('while heard on a slowed tick, still polls every heardPollMs, not every so many polls', async () => {
    const nextTick = () => new Promise<void>((r) => atNextTick(() => r()));
    let polls = 0;
    // Slowed to 2 s after one quiet tick; polls every tick, heard, with a safety poll every 4 s: every second slowed tick.
    slowWhenIdle({ idleTickMs: 2 * TICK_MS, idleAfterTicks: 1 });
    const stop = everyUnlessAnnounced(TICK_MS, () => () => undefined, () => polls++, 4 * TICK_MS);
    try {
      expect(await waitFor(() => tickPeriod() === 2 * TICK_MS, 10_000), 'slowed').to.equal(true);
      await nextTick();
      const p0 = polls;
      for (let i = 0; i < 4; i++) await nextTick();
      expect(polls - p0, 'polls over four slowed ticks (8 s)').to.equal(2);
    } finally {
      stop();
      stopSlowing();
    }
  });
});
