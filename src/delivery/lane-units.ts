// What a lane does with deliveries it holds outside of sending: builds them into units
// (requests under their claim; the webhook signs with this time), ends as failed those that
// cannot be built, and hands leases back (due again at once; a handed-off delivery without a
// row is stored, pending and due).
import { buildRequestsFor } from './build-requests-for.ts';
import { asNow, type LaneState, type Unit, type LaneDeps } from './lane-state.ts';
import { withRow } from './retry-policy.ts';
import type { ClaimedDelivery } from './types.ts';

export interface LaneUnits {
  build(claimed: ClaimedDelivery[], claimId: string, leaseUntil: number): Unit[];
  release(units: readonly Pick<Unit, 'claimId' | 'deliveries'>[]): Promise<void>;
}

export function createLaneUnits(deps: LaneDeps, s: LaneState, log: Record<string, unknown>): LaneUnits {
  /** Ends deliveries as failed without an attempt (nothing could be sent). */
  function finish(claimId: string, deliveries: ClaimedDelivery[], message: string): void {
    const updates = deliveries.map((held) => {
      const d = asNow(s, held);
      return withRow(d, { id: d.id, status: 'failed', attempts: d.attempts, nextAttemptAt: null });
    });
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
        // A handed-off delivery has no row to hand back: it is stored now, pending and due.
        const deliveries = u.deliveries.map((d) => asNow(s, d));
        const rows = deliveries.flatMap((d) => (d.unstored === undefined ? [] : [d.unstored]));
        const ids = rows.length === deliveries.length ? [] : deliveries.flatMap((d) => (d.unstored === undefined ? [d.id] : []));
        await deps.store.release(u.claimId, deps.clock(), ids)
          .catch((err) => deps.logger.error({ ...log, err }, 'releasing deliveries failed'));
        if (rows.length === 0) continue;
        // Not stored: its event stays queued and is fanned out again when its lease ends.
        await deps.settler.store(rows, deps.clock())
          .catch((err) => deps.logger.error({ ...log, err }, 'storing handed-back deliveries failed; their events are fanned out again when their lease ends'));
      }
    },
  };
}
