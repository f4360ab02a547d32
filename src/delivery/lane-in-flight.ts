// Handed-off deliveries have no rows while they are sent (write-once bookkeeping: the attempt
// record writes each one's row in its final state). Most are recorded within milliseconds;
// one that is still in its lane a second later (queued behind a slow receiver, held, or in a
// request that hangs) is stored now, pending and leased to its claim, so `deliveries list`,
// the trace, the statistics and the lagging gauges show it like any delivery in flight, and
// its event can leave the dispatch queue. From then on it is an ordinary claimed delivery:
// its record updates its row under the claim, and handing it back releases the lease. The
// lane notes that in its state (`storedInFlight`, read through `asNow`), never on the
// delivery itself, which may be in a request being sent.
import { isUnstored, type LaneState, type LaneDeps } from './lane-state.ts';
import type { ClaimedDelivery } from './types.ts';

/** How long a handed-off delivery stays in a lane without a row, at most about twice this. */
export const IN_FLIGHT_UNSTORED_MS = 1_000;

export interface LaneInFlight {
  start(): void;
  stop(): void;
  /**
   * The lane took handed-off deliveries: sweep every IN_FLIGHT_UNSTORED_MS until it holds none
   * without a row (an idle lane keeps no timer).
   */
  took(): void;
  /** Stores what has been in the lane for a while (also what the timer runs). */
  sweep(): Promise<void>;
}

export function createLaneInFlight(deps: LaneDeps, s: LaneState, log: Record<string, unknown>): LaneInFlight {
  /** Unstored deliveries seen by the last sweep: stored by the next one if still unstored. */
  let seen = new WeakSet<ClaimedDelivery>();
  let timer: NodeJS.Timeout | undefined;
  let started = false;
  let sweeping = false;

  function disarm(): void {
    clearInterval(timer);
    timer = undefined;
  }

  /**
   * Every unstored delivery the lane holds, one group per claim and lease: a lane of one-event
   * requests holds hundreds of units under one claim, stored in one statement rather than one
   * transaction each (by the last of which the lane had sent and recorded most of them).
   */
  function unstoredNow(): { claimId: string; leaseUntil: number; deliveries: ClaimedDelivery[] }[] {
    const groups = new Map<string, { claimId: string; leaseUntil: number; deliveries: ClaimedDelivery[] }>();
    const add = (claimId: string, leaseUntil: number, ds: readonly ClaimedDelivery[]) => {
      const list = ds.filter((d) => isUnstored(s, d));
      if (list.length === 0) return;
      const k = `${claimId}\0${leaseUntil}`;
      const g = groups.get(k);
      if (g === undefined) groups.set(k, { claimId, leaseUntil, deliveries: list });
      else g.deliveries.push(...list);
    };
    for (const u of s.queue) add(u.claimId, u.leaseUntil, u.deliveries);
    for (const u of s.sending) add(u.claimId, u.leaseUntil, u.deliveries);
    if (s.hold !== null) add(s.hold.claimId, s.hold.leaseUntil, s.hold.deliveries);
    return [...groups.values()];
  }

  async function sweep(): Promise<void> {
    if (sweeping) return;
    sweeping = true;
    try {
      const next = new WeakSet<ClaimedDelivery>();
      const groups = unstoredNow();
      // Nothing held without a row: no sweep until the next handoff.
      if (groups.length === 0) disarm();
      for (const g of groups) for (const d of g.deliveries) if (!seen.has(d)) next.add(d);
      for (const g of groups) {
        // Still held and unstored now (an earlier group's store took a while): one the lane sent
        // meanwhile is its record's to write, and storing it would only wait for that record.
        const held = g === groups[0] ? null : new Set(unstoredNow().flatMap((h) => h.deliveries));
        const due = g.deliveries.filter((d) => seen.has(d) && (held === null || held.has(d)));
        if (due.length === 0) continue;
        const rows = due.map((d) => d.unstored!);
        const ids = await deps.settler.store(rows, deps.clock(), { claimId: g.claimId, leaseUntil: g.leaseUntil });
        // Stored (or stored already by another holder, whose row its negative id never matches):
        // an ordinary claimed delivery from now on.
        due.forEach((d, i) => s.storedInFlight.set(d, ids[i] ?? d.id));
      }
      seen = next;
    } catch (err) {
      deps.logger.error({ ...log, err }, 'storing deliveries in flight failed; tried again in a second');
    } finally {
      sweeping = false;
    }
  }

  return {
    start() {
      started = true;
    },
    stop() {
      started = false;
      disarm();
    },
    took() {
      if (!started || timer !== undefined) return;
      timer = setInterval(() => void sweep(), IN_FLIGHT_UNSTORED_MS);
      timer.unref();
    },
    sweep,
  };
}
