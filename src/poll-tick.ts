// One timer per thread for the polls that run about once a second or less often when nothing
// happens: the rule store's revision, the rule and custom-endpoint folders, the delivery
// dispatcher's and its lanes' idle looks at the store. Each waits for its thread's next tick
// instead of on a timer of its own, so an idle thread wakes once a second however many of them
// it runs (on a small virtual machine each wake of a Node thread costs a few hundred µs of
// CPU, whatever it does). The tick is an interval timer that runs only while something waits
// for it. A poll configured with an interval that is not a whole number of ticks (tests)
// keeps a timer of its own.
//
// A thread that turns slowWhenIdle() on (the delivery thread) slows its tick to IDLE_TICK_MS
// once nothing has happened for IDLE_AFTER_TICKS ticks (no busy() call: no commit announced,
// nothing claimed or sent), and is back on the one-second tick at the next busy(), or at what
// it is told announces work while slow: a change to a file (`announcedBy`: SQLite's WAL,
// inotify, no wake of its own) or an announcer (`announcer`: PostgreSQL's LISTEN). The tick
// slows only while the announcements can be heard; an announcer that loses them (its
// connection dropped) brings the second back at once, so nothing waits on a notification that
// cannot come. A poll's wait is still counted in seconds (a 5 s tick is five ticks), so what
// waits a second waits up to IDLE_TICK_MS: what nothing announces may wait that long
// (src/delivery/README.md, "Idle").
//
// Where every poll's work is announced (PostgreSQL: slowWhenIdle with `heardPollMs`), a slowed
// tick is quiet: the polls that announcements stand in for (heard-polls.ts afterUnlessHeard, everyUnlessHeard:
// the delivery thread's idle looks at the store) do not run on it, unless what they know comes
// due then (a stored retry's time), or it is the safety read, every `heardPollMs`, for what
// nothing announces (another instance's lease that ran out). A slowed tick fires only while
// nothing was announced since it slowed (an announcement, or the loss of the watch, puts the
// tick back on the second), so a poll whose last read began under the watch on now has nothing
// to read until then.

import { watchAnnounced, type Announcer, type SlowingLogger } from './announcement-watch.ts';

export type { Announcer } from './announcement-watch.ts';

/** The tick's period. */
export const TICK_MS = 1_000;
/** The slowed tick's period (slowWhenIdle): a whole number of ticks. */
export const IDLE_TICK_MS = 5_000;
/** Ticks in a row with no busy() before the tick slows (slowWhenIdle). */
export const IDLE_AFTER_TICKS = 30;

const waiting = new Set<{ fn: (ticks: number, quiet: boolean) => void }>();
let timer: NodeJS.Timeout | undefined;
/** The tick's period now: TICK_MS, or the slowed one while idle. */
let period = TICK_MS;
/** Slowing when idle: off (null), or how, and what to do when the tick slows down or speeds up. */
let slowing: { idleTickMs: number; idleAfterTicks: number; announcedBy?: string; announcer?: Announcer; heardPollMs?: number; logger?: SlowingLogger } | null = null;
/** Stops watching the announcements (set while the tick is slow). */
let stopWatch: (() => void) | undefined;
/** busy() was called since the last tick. */
let active = false;
/** Ticks in a row without busy(). */
let quietTicks = 0;
/**
 * The watch that makes slowed ticks quiet (slowWhenIdle with `heardPollMs`): a number of its
 * own while it is on (the tick slowed, nothing announced since), else null. See heardMark().
 */
let heard: number | null = null;
/** Watches so far (each one's number). */
let watches = 0;
/** Slowed ticks since the tick slowed (every heardPollMs' worth, one is the safety read). */
let slowedTicks = 0;

function start(): void {
  timer = setInterval(fire, period);
  timer.unref();
}

function restart(): void {
  if (timer === undefined) return;
  clearInterval(timer);
  start();
}

function fire(): void {
  // A slowed tick counts as the seconds it stands for.
  const ticks = period / TICK_MS;
  const quiet = quietTick();
  if (slowing !== null) noteQuiet();
  const due = [...waiting];
  waiting.clear();
  for (const w of due) {
    try {
      w.fn(ticks, quiet);
    } catch (err) {
      // Thrown as a timer's callback would throw it, after the others ran.
      queueMicrotask(() => {
        throw err;
      });
    }
  }
  // Nothing waits for the next one (what ran above may have asked for it): stop until something does.
  if (waiting.size === 0) {
    clearInterval(timer);
    timer = undefined;
  }
}

/** Whether this tick is quiet (see the top): slowed, heard, and not the safety read's. */
function quietTick(): boolean {
  if (heard === null || period === TICK_MS) return false;
  const safetyEvery = Math.max(1, Math.round(slowing!.heardPollMs! / period));
  return ++slowedTicks % safetyEvery !== 0;
}

/** Counts a tick without busy(); slows the tick once there have been enough in a row. */
function noteQuiet(): void {
  if (active) {
    active = false;
    quietTicks = 0;
    return;
  }
  if (period !== TICK_MS || ++quietTicks < slowing!.idleAfterTicks) return;
  if (!watchAnnouncements()) {
    quietTicks = 0;
    return;
  }
  period = slowing!.idleTickMs;
  if (slowing!.heardPollMs !== undefined) heard = ++watches;
  slowedTicks = 0;
  slowing!.logger?.debug?.({ tick_ms: period }, 'idle: the polls tick slower until work is announced');
  restart();
}

/** While slow, an announcement is a busy(); false when none can be heard (the tick stays fast). */
function watchAnnouncements(): boolean {
  const stop = watchAnnounced(slowing!, busy);
  stopWatch = stop ?? undefined;
  return stop !== null;
}

/**
 * This thread's tick slows to `idleTickMs` (default IDLE_TICK_MS) after `idleAfterTicks`
 * (default IDLE_AFTER_TICKS) ticks in a row with no busy(). What announces work committed
 * elsewhere while slow is a busy(): `announcedBy`, a file whose change announces it;
 * `announcer`, a watch of announcements (see Announcer). While either cannot be heard the
 * tick does not slow. `heardPollMs`: the announcements stand in for the idle polls (see the
 * top), and those read on a slowed tick only this often (the safety read); unset: every
 * slowed tick is a tick like any other.
 */
export function slowWhenIdle(opts: { idleTickMs?: number; idleAfterTicks?: number; announcedBy?: string; announcer?: Announcer; heardPollMs?: number; logger?: SlowingLogger } = {}): void {
  const idleTickMs = opts.idleTickMs ?? IDLE_TICK_MS;
  if (idleTickMs <= 0 || idleTickMs % TICK_MS !== 0) throw new Error(`idleTickMs must be a whole number of ticks (${TICK_MS} ms): ${idleTickMs}`);
  if (opts.heardPollMs !== undefined && !(opts.heardPollMs > 0)) throw new Error(`heardPollMs must be positive: ${opts.heardPollMs}`);
  slowing = { idleTickMs, idleAfterTicks: opts.idleAfterTicks ?? IDLE_AFTER_TICKS, announcedBy: opts.announcedBy, announcer: opts.announcer, heardPollMs: opts.heardPollMs, logger: opts.logger };
  active = false;
  quietTicks = 0;
}

/**
 * Something happened on this thread (work announced, claimed or sent): the tick stays at, or
 * goes back to, TICK_MS, so what waits for it runs within a second. Cheap: called per send.
 */
export function busy(): void {
  active = true;
  if (period === TICK_MS) return;
  period = TICK_MS;
  heard = null;
  quietTicks = 0;
  const stop = stopWatch;
  stopWatch = undefined;
  stop?.();
  slowing?.logger?.debug?.({ tick_ms: period }, 'work announced: the polls tick every second again');
  restart();
}

/** The tick's period now (TICK_MS, or the slowed one while idle). */
export const tickPeriod = (): number => period;

/** Turns slowing off again and the tick back to TICK_MS (tests). */
export function stopSlowing(): void {
  busy();
  slowing = null;
}

/**
 * Calls `fn` once, at this thread's next tick: at most TICK_MS from now (the slowed tick's
 * period while idle), with the ticks it stands for and whether it is quiet (see the top).
 * Returns the cancel.
 */
export function atNextTick(fn: (ticks: number, quiet: boolean) => void): () => void {
  const w = { fn };
  waiting.add(w);
  if (timer === undefined) start();
  return () => {
    waiting.delete(w);
  };
}

/**
 * Restarts the tick now, so that it fires with any interval of the same period started in the
 * same turn of the event loop (Node runs timers of one period that fall due in the same
 * millisecond in one pass): the HTTP server's one-second connection check, started when it
 * begins listening, and this thread's polls then share one wake a second.
 */
export function alignTick(): void {
  if (timer === undefined) return;
  clearInterval(timer);
  start();
}

/**
 * Calls `fn` once after about `ms`: at the (ms / TICK_MS)th tick from now when `ms` is a whole
 * number of ticks (between ms - TICK_MS and ms from now; a slowed tick counts as the ticks it
 * stands for, so while idle up to the slowed period later), else on a timer of its own.
 * Returns the cancel.
 */
export function after(ms: number, fn: () => void): () => void {
  if (ms <= 0 || ms % TICK_MS !== 0) {
    const t = setTimeout(fn, ms);
    t.unref();
    return () => clearTimeout(t);
  }
  let left = ms / TICK_MS;
  let cancel = (): void => undefined;
  const onTick = (ticks: number) => {
    left -= ticks;
    if (left > 0) cancel = atNextTick(onTick);
    else fn();
  };
  cancel = atNextTick(onTick);
  return () => cancel();
}

/**
 * Calls `fn` every `ms`: on every (ms / TICK_MS)th tick when `ms` is a whole number of ticks
 * (while the tick is slowed, on each slowed tick that reaches it, but for a quiet one on which
 * `skipQuiet` says no: see everyUnlessHeard), else on an interval timer of its own. Returns
 * the stop.
 */
export function every(ms: number, fn: () => void, skipQuiet?: () => boolean): () => void {
  if (ms % TICK_MS !== 0) {
    const t = setInterval(fn, ms);
    t.unref();
    return () => clearInterval(t);
  }
  const ticks = ms / TICK_MS;
  let count = 0;
  let stopped = false;
  let cancel = (): void => undefined;
  const onTick = (elapsed: number, quiet: boolean) => {
    if (stopped) return;
    cancel = atNextTick(onTick); // first: an `fn` that throws does not end the polling
    count += elapsed;
    if (count < ticks || (quiet && skipQuiet?.())) return;
    count = 0;
    fn();
  };
  cancel = atNextTick(onTick);
  return () => {
    stopped = true;
    cancel();
  };
}

/**
 * What a poll that announcements stand in for notes as it begins to read: the watch on now
 * (null: none, or slowWhenIdle without `heardPollMs`). Given to afterUnlessHeard(), it says
 * whether the poll may skip the quiet ticks: only while that same watch is on, so nothing
 * committed after the read began went unannounced.
 */
export const heardMark = (): number | null => heard;

/** The safety read's period while slowed ticks are quiet (slowWhenIdle's `heardPollMs`). */
export const heardPollMs = (): number => slowing!.heardPollMs!;

/** Whether the tick's timer runs now (tests). */
export const tickRunning = (): boolean => timer !== undefined;
