// A poll that announcements can stand in for: `fn` runs every `ms` (on the thread's poll tick,
// poll-tick.ts) while the announcer cannot be heard, and at each announcement while it can.
// The HTTP thread's read of the rule store's revision in PostgreSQL mode is one: a publish by
// any instance is announced (NOTIFY on a connection that hears nothing else), so the thread
// reads the revision when one comes instead of every second. Starting to hear, or losing the
// announcer, runs `fn` too, so nothing committed while no one listened is missed.
import { every, type Announcer } from './poll-tick.ts';

/** Runs `fn` as described at the top (without `announcer`: every `ms`). Returns the stop. */
export function everyUnlessAnnounced(ms: number, announcer: Announcer | undefined, fn: () => void): () => void {
  if (announcer === undefined) return every(ms, fn);
  let stopWatch: (() => void) | null = null;
  let stopped = false;
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
    if (!listen() || !heard) fn();
  });
  return () => {
    stopped = true;
    stopWatch?.();
    stopPoll();
  };
}
