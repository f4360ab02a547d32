// What a lane does with deliveries it holds outside of sending: builds them into units
// (requests under their claim; the webhook signs with this time), ends as failed those that
// cannot be built, and hands leases back (due again at once).
import { buildRequestsFor } from './build-requests-for.ts';
import type { LaneDeps } from './lane-deps.ts';
import type { LaneState, Unit } from './lane-state.ts';
import type { ClaimedDelivery, DeliveryUpdate } from './types.ts';

export interface LaneUnits {
  build(claimed: ClaimedDelivery[], claimId: string, leaseUntil: number): Unit[];
  release(units: readonly Pick<Unit, 'claimId' | 'deliveries'>[]): Promise<void>;
}

export function createLaneUnits(deps: LaneDeps, s: LaneState, log: Record<string, unknown>): LaneUnits {
  /** Ends deliveries as failed without an attempt (nothing could be sent). */
  function finish(claimId: string, deliveries: ClaimedDelivery[], message: string): void {
    const updates = deliveries.map((d): DeliveryUpdate => ({ id: d.id, status: 'failed', attempts: d.attempts, nextAttemptAt: null }));
    deps.recorder.record({ claimId, destinationId: s.dest.id, at: deps.clock(), http: null, message, updates, pauseAfterMs: 0 })
      .catch((err) => deps.logger.error({ ...log, err }, 'recording failed deliveries failed'));
  }

  return {
    build(claimed, claimId, leaseUntil) {
      const { units, unsendable } = buildRequestsFor(s.plugin!.plugin, s.dest.type, s.dest.settings, claimed, deps.clock());
      for (const u of unsendable) finish(claimId, u.deliveries, u.message);
      return units.map((u) => ({ ...u, claimId, leaseUntil }));
    },
    async release(units) {
      for (const u of units) {
        await deps.store.release(u.claimId, deps.clock(), u.deliveries.map((d) => d.id))
          .catch((err) => deps.logger.error({ ...log, err }, 'releasing deliveries failed'));
      }
    },
  };
}
