// The first way into a lane: the fan-out hands it new deliveries, not stored, under a claim
// the lane offered, without a claim query (take → hold → flushHold). Only while nothing is
// due in the store for the lane (lane-claims.ts), and only as many as its room.
import { claimLimit, concurrencyOf, isActive, isRunning, maxEvents, queuedDeliveries, takesHandoffs, type LaneState, type LaneDeps } from './lane-state.ts';
import type { LaneUnits } from './lane-units.ts';
import type { ClaimedDelivery } from './types.ts';
import { PACE_BUSY_PATIENCE_FACTOR, type PaceClock } from './pace-clock.ts';

/** The handoff cap's floor when the dispatcher sets none (the cap itself: `handoffCap` below). */
export const HANDOFF_CAP = 400;

export interface LaneHandoffs {
  offer(): { claimId: string; leaseUntil: number; room: number } | null;
  saturated(need: number, at: PaceClock, patienceMs: number): boolean;
  take(claimId: string, leaseUntil: number, deliveries: ClaimedDelivery[]): void;
  /** Queues what the hold has gathered, or hands it back when the lane cannot send. */
  flushHold(): void;
}

export function createLaneHandoffs(deps: LaneDeps, s: LaneState, units: LaneUnits, pump: () => void): LaneHandoffs {
  /**
   * The handoff cap (its one definition; other comments refer here): the deliveries a lane
   * holds in memory from handoffs at most = max(two claims' worth, i.e. 2 × max(batch.maxEvents,
   * 4 × concurrency); the `handoffCap` option, default HANDOFF_CAP 400). With concurrency 8:
   * 400 for GA4 or a one-event-per-request lane, 2 000 for Meta or TikTok (maxEvents 1 000).
   */
  const handoffCap = () => Math.max(2 * claimLimit(s, concurrencyOf(s, deps.concurrency)), deps.handoffCap ?? HANDOFF_CAP);
  /** Handed-off deliveries this lane takes now: its cap less what it queues, sends and holds. */
  const room = () => handoffCap() - queuedDeliveries(s) - s.inflight * maxEvents(s) - (s.hold?.deliveries.length ?? 0);
  const lingers = () => deps.lingerMs > 0 && maxEvents(s) > 1;

  function flushHold(): void {
    if (s.hold === null) return;
    const h = s.hold;
    s.hold = null;
    clearTimeout(h.timer);
    if (!isRunning(s) || !isActive(s)) {
      void units.release([{ claimId: h.claimId, deliveries: h.deliveries }]);
      return;
    }
    s.queue.push(...units.build(h.deliveries, h.claimId, h.leaseUntil));
    pump();
  }

  return {
    flushHold,
    offer() {
      // Stored work is due: new work goes to the store behind it and is claimed in turn.
      if (!takesHandoffs(s)) return null;
      const r = room();
      if (r <= 0) return null;
      if (s.hold !== null) return { claimId: s.hold.claimId, leaseUntil: s.hold.leaseUntil, room: r };
      return { claimId: deps.nextClaimId(), leaseUntil: deps.clock() + deps.leaseMs, room: r };
    },
    saturated(need, at, patienceMs) {
      // A lane serving its stored work takes no handoffs: nothing to wait for.
      if (!isRunning(s) || !isActive(s) || s.claims.failures > 0 || s.claims.wanted || room() >= need) {
        s.shortSince = null;
        return false;
      }
      // Idle time: a thread busy sending is not a slow destination (fan-out-loop.ts PACE_PATIENCE_MS);
      // real time only while the lane frees no room (hung), however busy the thread.
      const r = room();
      if (s.shortSince === null) s.shortSince = { at, progressAt: at.wallMs, room: r };
      else if (r > s.shortSince.room) s.shortSince.progressAt = at.wallMs;
      s.shortSince.room = r;
      return at.idleMs - s.shortSince.at.idleMs < patienceMs && at.wallMs - s.shortSince.progressAt < patienceMs * PACE_BUSY_PATIENCE_FACTOR;
    },
    take(claimId, leaseUntil, deliveries) {
      if (deliveries.length === 0) return;
      if (!isRunning(s) || !isActive(s)) {
        // Stopped or paused while the fan-out committed: hand the lease back, due again at once.
        void units.release([{ claimId, deliveries }]);
        return;
      }
      // Not batching: built and queued now. Batching: held, flushHold on a timer after lingerMs (or once full).
      if (!lingers()) {
        s.queue.push(...units.build(deliveries, claimId, leaseUntil));
        pump();
        return;
      }
      if (s.hold !== null && s.hold.claimId !== claimId) flushHold();
      if (s.hold === null) s.hold = { claimId, leaseUntil, deliveries: [], timer: setTimeout(flushHold, deps.lingerMs).unref() };
      s.hold.deliveries.push(...deliveries);
      if (s.hold.deliveries.length >= maxEvents(s)) flushHold();
    },
  };
}
