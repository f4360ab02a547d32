// The polls' shared tick (src/poll-tick.ts): what waits a whole number of seconds waits for
// the thread's one-second tick, other intervals keep a timer of their own, and the tick stops
// when nothing waits for it. test/idle-timers.test.ts has the whole server on it.
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterUnlessHeard, everyUnlessHeard } from '../src/heard-polls.ts';
import { after, atNextTick, busy, every, heardMark, slowWhenIdle, stopSlowing, tickPeriod, tickRunning, TICK_MS } from '../src/poll-tick.ts';
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

  it('slows down once nothing is busy for a while (slowWhenIdle), counts a slow tick as the seconds it stands for, and is back on the one-second tick at busy()', async () => {
    slowWhenIdle({ idleTickMs: 2 * TICK_MS, idleAfterTicks: 2 });
    let runs = 0;
    const stop = every(TICK_MS, () => runs++);
    try {
      expect(await waitFor(() => tickPeriod() === 2 * TICK_MS, 10_000), 'slowed after two quiet ticks').to.equal(true);
      // A wait of two seconds ends at the next slowed tick, one of four seconds at the second.
      const done: string[] = [];
      after(2 * TICK_MS, () => done.push('two'));
      after(4 * TICK_MS, () => done.push('four'));
      const before = runs;
      expect(await waitFor(() => done.length === 1, 5_000)).to.equal(true);
      expect(done, 'the two-second wait first, on one slowed tick').to.deep.equal(['two']);
      expect(runs - before, 'the every-second poll ran once on that tick').to.equal(1);
      expect(await waitFor(() => done.length === 2, 5_000)).to.equal(true);
      busy();
      expect(tickPeriod()).to.equal(TICK_MS);
      // Busy on every tick: it stays fast.
      const keepBusy = every(TICK_MS, busy);
      const at = runs;
      expect(await waitFor(() => runs >= at + 4, 10_000)).to.equal(true);
      keepBusy();
      expect(tickPeriod(), 'not slowed while busy').to.equal(TICK_MS);
    } finally {
      stop();
      stopSlowing();
    }
  });

  it('while slowed, a commit by another connection to a SQLite database (its WAL file written) brings the one-second tick back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tl-tick-wal-'));
    const file = join(dir, 'db.sqlite');
    const mine = new Database(file);
    mine.pragma('journal_mode = WAL');
    mine.exec('CREATE TABLE t (x INTEGER)');
    // A slowed tick of a minute: only the announcement can bring it back within the wait below.
    slowWhenIdle({ idleTickMs: 60 * TICK_MS, idleAfterTicks: 1, announcedBy: `${file}-wal` });
    const stop = every(TICK_MS, () => undefined);
    const other = new Database(file);
    try {
      expect(await waitFor(() => tickPeriod() === 60 * TICK_MS, 10_000), 'slowed').to.equal(true);
      other.prepare('INSERT INTO t VALUES (1)').run();
      expect(await waitFor(() => tickPeriod() === TICK_MS, 10_000), 'back on the one-second tick').to.equal(true);
    } finally {
      stop();
      stopSlowing();
      other.close();
      mine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('slows only while its announcer can be heard, and an announcement (or the announcer\'s loss) brings the one-second tick back and stops the watch', async () => {
    let hearing = false;
    let announce: (() => void) | undefined;
    let watches = 0;
    slowWhenIdle({
      idleTickMs: 60 * TICK_MS, idleAfterTicks: 1,
      announcer: (fn) => {
        if (!hearing) return null;
        watches++;
        announce = fn;
        return () => (announce = undefined);
      },
    });
    let runs = 0;
    const stop = every(TICK_MS, () => runs++);
    try {
      expect(await waitFor(() => runs >= 3, 10_000)).to.equal(true);
      expect(tickPeriod(), 'not slowed while nothing can be heard').to.equal(TICK_MS);
      hearing = true;
      expect(await waitFor(() => tickPeriod() === 60 * TICK_MS, 10_000), 'slowed once it can').to.equal(true);
      expect(watches).to.equal(1);
      announce!();
      expect(tickPeriod(), 'back on the second').to.equal(TICK_MS);
      expect(announce, 'the watch stopped').to.equal(undefined);
      // Slowed again, then the announcer reports its loss the same way: fast again.
      expect(await waitFor(() => tickPeriod() === 60 * TICK_MS, 10_000), 'slowed again').to.equal(true);
      hearing = false;
      announce!();
      expect(tickPeriod()).to.equal(TICK_MS);
      const at = runs;
      expect(await waitFor(() => runs >= at + 3, 10_000)).to.equal(true);
      expect(tickPeriod(), 'stays fast while it cannot be heard').to.equal(TICK_MS);
    } finally {
      stop();
      stopSlowing();
    }
  });

  it('with heardPollMs, its slowed ticks are quiet: a poll whose last read began under the watch waits for an announcement, a due time it knows, or the safety read', async () => {
    let announce: (() => void) | undefined;
    const announcer = (fn: () => void) => {
      announce = fn;
      return () => (announce = undefined);
    };
    // No safety read within this part: only an announcement or a due time ends a wait.
    slowWhenIdle({ idleTickMs: 2 * TICK_MS, idleAfterTicks: 1, heardPollMs: 3_600_000, announcer });
    const log: string[] = [];
    // Each tick's own entry first (it re-arms before the others run), then what ran on it.
    const record = () => atNextTick((_ticks, quiet) => {
      log.push(quiet ? 'quiet' : 'tick');
      record();
    });
    const stopRecord = record();
    let polls = 0;
    const stopPoll = everyUnlessHeard(TICK_MS, () => log.push(`poll${++polls}`));
    const nextTick = () => new Promise<void>((r) => atNextTick(() => r()));
    try {
      expect(await waitFor(() => tickPeriod() === 2 * TICK_MS, 10_000), 'slowed').to.equal(true);
      await nextTick(); // the poll read once more, under the watch on now
      const mark = heardMark();
      expect(mark, 'a watch is on').to.be.a('number');
      log.length = 0;
      afterUnlessHeard(TICK_MS, mark, () => log.push('heard'));
      afterUnlessHeard(TICK_MS, mark, () => log.push('due'), 4 * TICK_MS);
      afterUnlessHeard(TICK_MS, null, () => log.push('unmarked'));
      await nextTick();
      await nextTick();
      expect(log, 'two quiet ticks: the unmarked wait on the first, the due one on the second (4 s)').to.deep.equal(['quiet', 'unmarked', 'quiet', 'due']);
      announce!();
      await nextTick();
      expect(log.slice(4), 'the announcement: a tick like any other').to.deep.equal(['tick', `poll${polls}`, 'heard']);

      // The safety read: every heardPollMs' worth of slowed ticks, one is not quiet.
      slowWhenIdle({ idleTickMs: 2 * TICK_MS, idleAfterTicks: 1, heardPollMs: 4 * TICK_MS, announcer });
      expect(await waitFor(() => tickPeriod() === 2 * TICK_MS, 10_000), 'slowed again').to.equal(true);
      log.length = 0;
      for (let i = 0; i < 4; i++) await nextTick();
      const ticks = log.filter((e) => e === 'quiet' || e === 'tick');
      expect(ticks.filter((e) => e === 'tick'), `every second slowed tick reads: ${log.join(' ')}`).to.have.length(2);
      expect(log.filter((e) => e.startsWith('poll')), 'the poll on those alone').to.have.length(2);
    } finally {
      stopPoll();
      stopRecord();
      stopSlowing();
    }
  });
});
