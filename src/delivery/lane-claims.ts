// What a lane claims from the store, with a lease: its ways in 2 and 3 (lane.ts).
// Due work, oldest due first (notify → claimAndQueue), lingering briefly after new work so
// batches fill. While a claim comes back full it keeps claiming (and takes no handoffs); a
// short one ends that until the store has something due again, which the lane looks for at
// most every idlePollMs. A failing store is retried with a capped, jittered backoff.
// And the retries it recorded, as they come due (note → claimDue). A refused delivery goes
// out again on schedule even while its lane lags (first attempts queued in memory, or due in
// the store long before it): when one of its retries comes due, the lane claims the due
// retries at once (retries only, oldest due first), whatever it queues, and puts them at the
// head of its queue, so they take the next free slots ahead of every first attempt. This does
// not starve new work: a delivery is retried at most ten times, ever further apart (10 s,
// 1 min, 5 min …), so what is due at any moment is bounded by the first attempts made before
// it. Retries this lane did not record (another instance's, from before a restart) are not
// timed here: claims take due retries first (the store's claim order).
// The look at the store and the first retry due are the two times of the lane's one wake
// (lane-wake.ts).
import { claimLimit, concurrencyOf, isActive, isRunning, maxEvents, type LaneState, type Unit, type LaneDeps } from './lane-state.ts';
import type { LaneUnits } from './lane-units.ts';
import type { LaneWake } from './lane-wake.ts';
import type { DeliveryUpdate } from './types.ts';
import { storeErrorBackoffMs } from './retry-policy.ts';
import { busy, heardMark } from '../poll-tick.ts';

/** After a retries claim failed (a store error), the next try: the retries stay due in the store meanwhile. */
const RETRY_AFTER_ERROR_MS = 1_000;

export interface LaneClaims {
  /** New deliveries were stored for this lane. */
  notify(): void;
  /** Claims a batch into the queue (pump() calls it when the queue runs low and a claim is wanted). */
  claimAndQueue(): Promise<void>;
  /** Leases up to `limit` due deliveries (due retries first; `retriesOnly`: nothing else) and turns them into requests. */
  claim(limit: number, opts?: { retriesOnly?: boolean }): Promise<{ units: Unit[]; claimed: number }>;
  /** The planned look at the store (the wake fired for it): claims when something is due, else plans the next. */
  wakeIfDue(): Promise<void>;
  /** A recorded attempt's updates: each retry among them is claimed when it comes due. */
  note(updates: readonly DeliveryUpdate[], at: number): void;
  /** Claims the due retries to the head of the queue (pump() calls it while `s.retries.wanted` and no claim runs). */
  claimDue(): Promise<void>;
}

export function createLaneClaims(
  deps: LaneDeps, s: LaneState, units: LaneUnits, wake: Pick<LaneWake, 'lookIn' | 'cancelLook' | 'retryAt'>, log: Record<string, unknown>, pump: () => void,
): LaneClaims {
  async function claim(limit: number, opts?: { retriesOnly?: boolean }): Promise<{ units: Unit[]; claimed: number }> {
    const claimId = deps.nextClaimId();
    const now = deps.clock();
    const leaseUntil = now + deps.leaseMs;
    const claimed = await deps.store.claimDeliveries(s.dest.id, claimId, now, leaseUntil, limit, opts);
    if (claimed.length > 0) busy();
    if (deps.remap !== undefined && claimed.some((d) => d.remap !== undefined)) await deps.remap(s.dest, claimed);
    return { units: claimed.length > 0 ? units.build(claimed, claimId, leaseUntil) : [], claimed: claimed.length };
  }

  async function claimAndQueue(): Promise<void> {
    s.claims.running = true;
    try {
      const limit = claimLimit(s, concurrencyOf(s, deps.concurrency));
      const notifiedBefore = s.claims.notified;
      const { units: claimed, claimed: count } = await claim(limit);
      s.claims.failures = 0;
      s.queue.push(...claimed);
      if (count < limit && s.claims.notified === notifiedBefore) {
        s.claims.wanted = false;
        await scheduleWake();
      }
    } catch (err) {
      backOff(err);
    } finally {
      s.claims.running = false;
    }
    pump();
  }

  /** Never spins on a failing store: waits (capped, with jitter) before claiming again; one line per wait. */
  function backOff(err: unknown): void {
    s.claims.failures++;
    const retryInMs = storeErrorBackoffMs(s.claims.failures, deps.random ?? Math.random);
    deps.logger.error({ ...log, err, consecutive_failures: s.claims.failures, retry_in_ms: retryInMs },
      'claiming deliveries failed; backing off');
    s.claims.wanted = false;
    wake.lookIn(retryInMs);
  }

  /**
   * Plans the next look: when the store's next delivery is due, at most idlePollMs away (then
   * on the poll tick, but for its quiet ticks until that delivery is due: lane-wake.ts).
   * `read`: the store's next due time as just read, under the announcement watch `mark`.
   */
  async function scheduleWake(read?: { next: number | null; mark: number | null }): Promise<void> {
    wake.cancelLook();
    if (!isRunning(s) || !isActive(s)) return;
    const mark = read ? read.mark : heardMark();
    const next = read ? read.next : await deps.store.nextDue(s.dest.id);
    const now = deps.clock();
    wake.lookIn(next === null ? deps.idlePollMs : Math.min(deps.idlePollMs, Math.max(0, next - now)), { mark, dueAt: next });
  }

  /** Claims (and stops taking handoffs) only when something is due now; else looks again later. */
  async function wakeIfDue(): Promise<void> {
    if (s.claims.wanted || s.claims.failures > 0) {
      s.claims.wanted = true; // after a store error: try the claim itself again
      pump();
      return;
    }
    try {
      const mark = heardMark();
      const next = await deps.store.nextDue(s.dest.id);
      if (next !== null && next <= deps.clock()) {
        s.claims.wanted = true;
        pump();
      } else await scheduleWake({ next, mark });
    } catch (err) {
      deps.logger.error({ ...log, err }, 'reading the next due delivery failed');
      s.claims.wanted = true;
      pump();
    }
  }

  async function claimDue(): Promise<void> {
    s.claims.running = true;
    s.retries.wanted = false;
    try {
      const limit = claimLimit(s, concurrencyOf(s, deps.concurrency));
      const { units: claimed, claimed: count } = await claim(limit, { retriesOnly: true });
      s.queue.unshift(...claimed);
      if (count === limit) s.retries.wanted = true; // more are due
    } catch (err) {
      deps.logger.error({ ...log, err, retry_in_ms: RETRY_AFTER_ERROR_MS }, 'claiming due retries failed');
      wake.retryAt(deps.clock() + RETRY_AFTER_ERROR_MS);
    } finally {
      s.claims.running = false;
    }
    pump();
  }

  return {
    claim,
    claimAndQueue,
    wakeIfDue,
    claimDue,
    note(updates, at) {
      for (const u of updates) if (u.status === 'pending' && u.nextAttemptAt !== null && u.nextAttemptAt > at) wake.retryAt(u.nextAttemptAt);
    },
    notify() {
      busy();
      s.claims.notified++;
      if (!isRunning(s) || !isActive(s)) return;
      if (deps.lingerMs > 0 && maxEvents(s) > 1 && !s.claims.wanted && s.timers.linger === undefined) {
        // Let more events arrive so the batch fills, then claim.
        s.timers.linger = setTimeout(() => {
          s.timers.linger = undefined;
          s.claims.wanted = true;
          pump();
        }, deps.lingerMs);
        s.timers.linger.unref();
        return;
      }
      s.claims.wanted = true;
      pump();
    },
  };
}
