// Polls that announcements stand in for (poll-tick.ts, the top: a slowed tick is quiet where
// every poll's work is announced): they skip the quiet ticks while the watch they began their
// last read under is still on, and read at the safety read, an announcement, the watch's loss,
// or a known due time.
import { after, atNextTick, every, heardMark, heardPollMs, TICK_MS } from './poll-tick.ts';

/**
 * after(ms, fn) for a poll that announcements stand in for, whose last read began at `mark`
 * (heardMark()): past `ms`, quiet ticks do not call it while the watch of `mark` is on; the
 * first tick that is not quiet does (an announcement, the watch's loss or the safety read), or
 * the first at least `dueInMs` from now (null: nothing known to come due), whichever comes
 * first. A `mark` of null, or an `ms` that is not a whole number of ticks: after(ms, fn).
 */
export function afterUnlessHeard(ms: number, mark: number | null, fn: () => void, dueInMs: number | null = null): () => void {
  if (mark === null || ms <= 0 || ms % TICK_MS !== 0) return after(ms, fn);
  let left = ms;
  let waited = 0;
  let cancel = (): void => undefined;
  const onTick = (ticks: number, quiet: boolean) => {
    left -= ticks * TICK_MS;
    waited += ticks * TICK_MS;
    const standsIn = quiet && mark === heardMark() && (dueInMs === null || waited < dueInMs);
    if (left > 0 || standsIn) cancel = atNextTick(onTick);
    else fn();
  };
  cancel = atNextTick(onTick);
  return () => cancel();
}

/**
 * every(ms, fn) for a poll that announcements stand in for (its read beginning when `fn` is
 * called): a quiet tick does not call it while the watch on at its last call is still on
 * (see afterUnlessHeard). An `ms` that is not a whole number of ticks: every(ms, fn).
 */
export function everyUnlessHeard(ms: number, fn: () => void): () => void {
  if (ms % TICK_MS !== 0) return every(ms, fn);
  let mark: number | null = null;
  const stop = every(ms, () => {
    mark = heardMark();
    fn();
  }, () => mark !== null && mark === heardMark());
  return stop;
}

/**
 * For a poll on a timer of its own (not the tick): whether the announcements stand in for a
 * read now, its last having begun at `mark` (heardMark() then) `readAt` (Date.now() then):
 * the same watch still on, and less than heardPollMs since (the safety read).
 */
export function heardSince(mark: number | null, readAt: number, now = Date.now()): boolean {
  return mark !== null && mark === heardMark() && now - readAt < heardPollMs();
}

