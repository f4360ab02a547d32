// One timer per thread for the polls that run about once a second or less often when nothing
// happens: the rule store's revision, the rule and custom-endpoint folders, the delivery
// dispatcher's and its lanes' idle looks at the store. Each waits for its thread's next tick
// instead of on a timer of its own, so an idle thread wakes once a second however many of them
// it runs (on a small virtual machine each wake of a Node thread costs a few hundred µs of
// CPU, whatever it does). The tick is an interval timer that runs only while something waits
// for it. A poll configured with an interval that is not a whole number of ticks (tests)
// keeps a timer of its own.

/** The tick's period. */
export const TICK_MS = 1_000;

const waiting = new Set<{ fn: () => void }>();
let timer: NodeJS.Timeout | undefined;

function start(): void {
  timer = setInterval(fire, TICK_MS);
  timer.unref();
}

function fire(): void {
  const due = [...waiting];
  waiting.clear();
  for (const w of due) {
    try {
      w.fn();
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

/** Calls `fn` once, at this thread's next tick: at most TICK_MS from now. Returns the cancel. */
export function atNextTick(fn: () => void): () => void {
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
 * number of ticks (between ms - TICK_MS and ms from now), else on a timer of its own. Returns the cancel.
 */
export function after(ms: number, fn: () => void): () => void {
  if (ms <= 0 || ms % TICK_MS !== 0) {
    const t = setTimeout(fn, ms);
    t.unref();
    return () => clearTimeout(t);
  }
  let left = ms / TICK_MS;
  let cancel = (): void => undefined;
  const onTick = () => {
    if (--left > 0) cancel = atNextTick(onTick);
    else fn();
  };
  cancel = atNextTick(onTick);
  return () => cancel();
}

/**
 * Calls `fn` every `ms`: on every (ms / TICK_MS)th tick when `ms` is a whole number of ticks,
 * else on an interval timer of its own. Returns the stop.
 */
export function every(ms: number, fn: () => void): () => void {
  if (ms % TICK_MS !== 0) {
    const t = setInterval(fn, ms);
    t.unref();
    return () => clearInterval(t);
  }
  const ticks = ms / TICK_MS;
  let count = 0;
  let stopped = false;
  let cancel = (): void => undefined;
  const onTick = () => {
    if (stopped) return;
    cancel = atNextTick(onTick); // first: an `fn` that throws does not end the polling
    if (++count < ticks) return;
    count = 0;
    fn();
  };
  cancel = atNextTick(onTick);
  return () => {
    stopped = true;
    cancel();
  };
}

/** Whether the tick's timer runs now (tests). */
export const tickRunning = (): boolean => timer !== undefined;
