// The third way into a lane: the retries it recorded, as they come due. A refused delivery
// goes out again on schedule even while its lane lags (first attempts queued in memory, or
// due in the store long before it): when one of its retries comes due, the lane claims the
// due retries at once (retries only, oldest due first), whatever it queues, and puts them at
// the head of its queue, so they take the next free slots ahead of every first attempt.
// This does not starve new work: a delivery is retried at most ten times, ever further apart
// (10 s, 1 min, 5 min …), so what is due at any moment is bounded by the first attempts
// made before it. Retries this lane did not record (another instance's, from before a
// restart) are not timed here: claims take due retries first (the store's claim order).
import type { LaneClaims } from './lane-claims.ts';
import type { LaneDeps } from './lane-deps.ts';
import { claimLimit, concurrencyOf, isRunning, type LaneState } from './lane-state.ts';
import type { DeliveryUpdate } from './types.ts';

/** Retries coming due within this long of each other are claimed together: each at most this late. */
export const RETRY_CLAIM_GAP_MS = 50;
/** After a retries claim failed (a store error), the next try: the retries stay due in the store meanwhile. */
const RETRY_AFTER_ERROR_MS = 1_000;

export interface LaneRetries {
  /** A recorded attempt's updates: each retry among them is claimed when it comes due. */
  note(updates: readonly DeliveryUpdate[], at: number): void;
  /** Claims the due retries to the head of the queue (pump() calls it while `s.retries.wanted` and no claim runs). */
  claimDue(): Promise<void>;
  stop(): void;
}

export function createLaneRetries(deps: LaneDeps, s: LaneState, claims: Pick<LaneClaims, 'claim'>, log: Record<string, unknown>, pump: () => void): LaneRetries {
  const r = s.retries;

  /** Sets the timer for the earliest retry noted, unless one is set for it or earlier. */
  function arm(): void {
    const next = r.due[0];
    if (next === undefined || !isRunning(s)) return;
    if (s.timers.retry !== undefined && r.timerAt !== null && r.timerAt <= next) return;
    clearTimeout(s.timers.retry);
    r.timerAt = next;
    s.timers.retry = setTimeout(fire, Math.max(RETRY_CLAIM_GAP_MS, next - deps.clock()));
    s.timers.retry.unref();
  }

  function fire(): void {
    s.timers.retry = undefined;
    r.timerAt = null;
    const now = deps.clock();
    let due = false;
    while (r.due.length > 0 && r.due[0] <= now) {
      heapPop(r.due);
      due = true;
    }
    if (due) {
      r.wanted = true;
      pump();
    }
    arm();
  }

  return {
    note(updates, at) {
      for (const u of updates) if (u.status === 'pending' && u.nextAttemptAt !== null && u.nextAttemptAt > at) heapPush(r.due, u.nextAttemptAt);
      arm();
    },
    async claimDue() {
      s.claims.running = true;
      r.wanted = false;
      try {
        const limit = claimLimit(s, concurrencyOf(s, deps.concurrency));
        const { units, claimed } = await claims.claim(limit, { retriesOnly: true });
        s.queue.unshift(...units);
        if (claimed === limit) r.wanted = true; // more are due
      } catch (err) {
        deps.logger.error({ ...log, err, retry_in_ms: RETRY_AFTER_ERROR_MS }, 'claiming due retries failed');
        heapPush(r.due, deps.clock() + RETRY_AFTER_ERROR_MS);
        arm();
      } finally {
        s.claims.running = false;
      }
      pump();
    },
    stop() {
      clearTimeout(s.timers.retry);
      s.timers.retry = undefined;
      r.timerAt = null;
    },
  };
}

/** Adds `t` to the min-heap `h`. */
function heapPush(h: number[], t: number): void {
  let i = h.push(t) - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (h[parent] <= t) break;
    h[i] = h[parent];
    i = parent;
  }
  h[i] = t;
}

/** Removes the least element of the min-heap `h` (not empty). */
function heapPop(h: number[]): void {
  const last = h.pop()!;
  if (h.length === 0) return;
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= h.length) break;
    const c = l + 1 < h.length && h[l + 1] < h[l] ? l + 1 : l;
    if (h[c] >= last) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = last;
}
