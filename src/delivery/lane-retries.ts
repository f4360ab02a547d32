// The third way into a lane: the retries it recorded, as they come due. A refused delivery
// goes out again on schedule even while its lane lags (first attempts queued in memory, or
// due in the store long before it): when one of its retries comes due, the lane claims the
// due retries at once (retries only, oldest due first), whatever it queues, and puts them at
// the head of its queue, so they take the next free slots ahead of every first attempt.
// This does not starve new work: a delivery is retried at most ten times, ever further apart
// (10 s, 1 min, 5 min …), so what is due at any moment is bounded by the first attempts
// made before it. Retries this lane did not record (another instance's, from before a
// restart) are not timed here: claims take due retries first (the store's claim order).
// The lane's one wake (lane-wake.ts) fires for the first retry due, or its next look at the
// store if that comes first.
import type { LaneClaims } from './lane-claims.ts';
import type { LaneDeps } from './lane-deps.ts';
import { claimLimit, concurrencyOf, type LaneState } from './lane-state.ts';
import type { LaneWake } from './lane-wake.ts';
import type { DeliveryUpdate } from './types.ts';

/** After a retries claim failed (a store error), the next try: the retries stay due in the store meanwhile. */
const RETRY_AFTER_ERROR_MS = 1_000;

export interface LaneRetries {
  /** A recorded attempt's updates: each retry among them is claimed when it comes due. */
  note(updates: readonly DeliveryUpdate[], at: number): void;
  /** Claims the due retries to the head of the queue (pump() calls it while `s.retries.wanted` and no claim runs). */
  claimDue(): Promise<void>;
}

export function createLaneRetries(
  deps: LaneDeps, s: LaneState, claims: Pick<LaneClaims, 'claim'>, wake: Pick<LaneWake, 'retryAt'>, log: Record<string, unknown>, pump: () => void,
): LaneRetries {
  const r = s.retries;
  return {
    note(updates, at) {
      for (const u of updates) if (u.status === 'pending' && u.nextAttemptAt !== null && u.nextAttemptAt > at) wake.retryAt(u.nextAttemptAt);
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
        wake.retryAt(deps.clock() + RETRY_AFTER_ERROR_MS);
      } finally {
        s.claims.running = false;
      }
      pump();
    },
  };
}
