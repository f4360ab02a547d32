// The delivery thread's watchdog (DELIVERY_WATCHDOG_MS), on the main thread: a thread whose
// event loop stops answering for longer than the bound (a mapping stuck in a loop) is ended.
// Checked PINGS_PER_WATCH times per bound. A check that finds the thread's event loop idled
// since the last one (its idle time grew: Worker.performance.eventLoopUtilization(), read from
// this thread without waking that one) counts it as an answer; only a thread that did not idle
// in between (busy, or stuck) is pinged, and its pong (any message) is the answer. So an idle
// thread is not woken by its watchdog, nor this thread by the pong (src/delivery/README.md,
// "Idle"). A stuck thread is ended at most two checks past the bound after its last turn: the
// check that saw it idle last may come up to one check after that turn.
import { every, TICK_MS } from '../poll-tick.ts';

/** Checks per bound. */
export const PINGS_PER_WATCH = 4;

export interface ThreadWatchdog {
  /** The thread spoke (any message): arms the watchdog, and counts as an answer. */
  heard(): void;
  /** Checks so far, and pings sent (tests). */
  readonly checks: number;
  readonly pings: number;
  stop(): void;
}

export interface ThreadWatchdogOptions {
  watchMs: number;
  /** The thread's event-loop idle time so far, ms (grows while its loop waits). */
  idleMs(): number;
  ping(): void;
  /** The thread has not answered for `silentMs` (> watchMs): end it. The watchdog disarms until heard() again. */
  onStall(silentMs: number): void;
  now?: () => number;
}

/**
 * The period of the checks: a quarter of the bound, in whole ticks when it is a second or more,
 * so the checks ride the main thread's poll tick (poll-tick.ts every()) and wake it no more.
 * While that tick is slowed (no connection open: http/idle-tick.ts) they come at the slowed
 * ticks that reach it: every 10 s for the default 30 s bound.
 */
export function checkPeriodMs(watchMs: number): number {
  const ms = Math.max(100, Math.floor(watchMs / PINGS_PER_WATCH));
  return ms < TICK_MS ? ms : Math.floor(ms / TICK_MS) * TICK_MS;
}

/** Starts checking as described at the top. Not armed until the thread's first heard(): loading its modules is not a stall. */
export function startThreadWatchdog(opts: ThreadWatchdogOptions): ThreadWatchdog {
  const now = opts.now ?? Date.now;
  let heardAt: number | undefined;
  let lastIdle = readIdle();
  let checks = 0;
  let pings = 0;

  function readIdle(): number {
    try {
      return opts.idleMs();
    } catch {
      return 0; // the thread is gone: nothing idles
    }
  }

  function check(): void {
    checks++;
    const idle = readIdle();
    const idled = idle > lastIdle;
    lastIdle = idle;
    if (heardAt !== undefined && idled) {
      heardAt = now();
      return;
    }
    if (heardAt !== undefined && now() - heardAt > opts.watchMs) {
      const silent = now() - heardAt;
      heardAt = undefined;
      opts.onStall(silent);
      return;
    }
    pings++;
    opts.ping();
  }

  const stop = every(checkPeriodMs(opts.watchMs), check);
  return {
    heard() {
      heardAt = now();
    },
    get checks() {
      return checks;
    },
    get pings() {
      return pings;
    },
    stop,
  };
}
