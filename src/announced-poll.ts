// A poll that announcements can stand in for: `fn` runs every `ms` (on the thread's poll tick,
// poll-tick.ts) while the announcer cannot be heard, and at each announcement while it can.
// The HTTP thread's read of the rule store's revision in PostgreSQL mode is one: a publish by
// any instance is announced (NOTIFY on a connection that hears nothing else), so the thread
// reads the revision when one comes instead of every second. Starting to hear, or losing the
// announcer, runs `fn` too, so nothing committed while no one listened is missed; and while it
// hears, `fn` still runs every HEARD_POLL_MS, for a connection the network lost without a
// word (which TCP keepalive ends only after minutes). Without an announcer of its own, `fn`
// runs every `ms` but for the quiet ticks of a thread whose slowed tick stands for the
// announcements (poll-tick.ts everyUnlessHeard: the delivery thread on PostgreSQL).
import { everyUnlessHeard } from './heard-polls.ts';
import { every, tickPeriod, type Announcer } from './poll-tick.ts';

/** While the announcer is heard, `fn` still runs this often. */
export const HEARD_POLL_MS = 30_000;

/** Runs `fn` as described at the top (without `announcer`: everyUnlessHeard). Returns the stop. */
export function everyUnlessAnnounced(ms: number, announcer: Announcer | undefined, fn: () => void, heardPollMs = HEARD_POLL_MS): () => void {
  if (announcer === undefined) return everyUnlessHeard(ms, fn);
  let stopWatch: (() => void) | null = null;
  let stopped = false;
  /** Milliseconds of polls skipped in a row while heard (a slowed tick, poll-tick.ts, stands for its period). */
  let skippedMs = 0;
  /** Watches unless it does already; whether the announcements are heard now. */
  const listen = (): boolean => (stopWatch ??= announcer(announced)) !== null;
  function announced(): void {
    if (stopped) return;
    // Watching again before `fn` reads: what commits after that read is announced to the new watch.
    stopWatch?.();
    stopWatch = null;
    listen();
    fn();
  }
  const stopPoll = every(ms, () => {
    const heard = stopWatch !== null;
    if (listen() && heard && (skippedMs += Math.max(ms, tickPeriod())) < heardPollMs) return;
    skippedMs = 0;
    fn();
  });
  return () => {
    stopped = true;
    stopWatch?.();
    stopPoll();
  };
}
