// One destination's send lane: its own queue, concurrency and timers, so a slow or dead
// destination never holds up another. Work comes in three ways: handed off by the fan-out,
// not stored, under a claim the lane offered (here: offer, take → hold → flushHold), only
// while nothing is due in the store for it; else claimed from the store, due retries first,
// then oldest due first (lane-claims.ts); and the retries it recorded, claimed as they come
// due into the head of its queue (lane-claims.ts too). pump() moves queued requests into free
// slots (lane-send.ts) and asks for a claim when the queue runs low. One wake (lane-wake.ts)
// serves the due retries and the next look at the store. What a lane is given and the state
// all its parts share are in lane-state.ts.
import type { LoadedPlugin } from '../destinations/load-plugins.ts';
import { createLaneClaims } from './lane-claims.ts';
import { createLaneInFlight } from './lane-in-flight.ts';
import { createLaneSend } from './lane-send.ts';
import {
  claimLimit, concurrencyOf, createLaneState, isActive, isIdle, isRunning, maxEvents, maySend, queuedDeliveries, takesHandoffs, type LaneDeps,
} from './lane-state.ts';
import { createLaneUnits } from './lane-units.ts';
import { createLaneWake } from './lane-wake.ts';
import { PACE_BUSY_PATIENCE_FACTOR, type PaceClock } from './pace-clock.ts';
import type { ActiveDestination, ClaimedDelivery } from './types.ts';

export type { LaneLogger } from './types.ts';
export type { LaneDeps } from './lane-state.ts';

/** The handoff cap's floor when the dispatcher sets none (the cap itself: `handoffCap` in createLane). */
export const HANDOFF_CAP = 400;

export interface Lane {
  readonly destinationId: string;
  readonly inflight: number;
  /** New settings, enabled flag or pause state from the store. */
  update(dest: ActiveDestination, plugin: LoadedPlugin | undefined): void;
  /** New deliveries were queued for this destination. */
  notify(): void;
  /** How many new deliveries this lane takes straight from the fan-out, leased to a new claim (null: none now). */
  offer(): { claimId: string; leaseUntil: number; room: number } | null;
  /**
   * Whether the fan-out should wait for this lane: it is running, has room for fewer than
   * `need` handed-off deliveries, and has been short of room for less than `patienceMs` of the
   * thread's idle time, and has freed room within PACE_BUSY_PATIENCE_FACTOR × `patienceMs` of
   * real time (`at`: pace-clock.ts). A lane short for longer is slow: the fan-out goes on
   * without waiting, and this lane claims what is stored for it when it gets to it.
   */
  saturated(need: number, at: PaceClock, patienceMs: number): boolean;
  /**
   * Deliveries the fan-out handed off under this lane's offered claim: not stored (no rows until
   * their attempt records write them; fan-out.ts), queued for sending; a batching destination's
   * (lingerMs > 0, batch.maxEvents > 1) are held lingerMs on a timer first, so a request fills.
   */
  take(claimId: string, leaseUntil: number, deliveries: ClaimedDelivery[]): void;
  start(): void;
  /** Claims and sends until nothing is due, waiting for each batch (tests, runOnce). */
  drainOnce(): Promise<void>;
  /** Stops claiming, hands queued work back, and resolves when nothing is in flight. */
  stop(): Promise<void>;
}

export function createLane(deps: LaneDeps, initial: ActiveDestination, initialPlugin: LoadedPlugin | undefined): Lane {
  const s = createLaneState(initial, initialPlugin);
  const log = { destination_id: initial.id, destination_type: initial.type };
  const units = createLaneUnits(deps, s, log);
  // The wake runs what comes due: the retries (claimed next, ahead of the queue) and the look at the store.
  const wake = createLaneWake(deps, s, {
    retriesDue() {
      s.retries.wanted = true;
      pump();
    },
    look: () => void claims.wakeIfDue(),
  });
  const claims = createLaneClaims(deps, s, units, wake, log, pump);
  const sendUnit = createLaneSend(deps, s, units, log, pump, claims);
  const inFlight = createLaneInFlight(deps, s, log);

  // The first way in: the fan-out hands new deliveries over, not stored, under a claim the
  // lane offered, without a claim query (offer, then take → hold → flushHold). Only while
  // nothing is due in the store for the lane (lane-claims.ts), and only as many as its room.

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

  /** Queues what the hold has gathered (built into requests), or hands it back when the lane cannot send. */
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

  /** Handed-off deliveries: built and queued now, or (batching) held lingerMs on a timer first, so a request fills. */
  function takeHandoff(claimId: string, leaseUntil: number, deliveries: ClaimedDelivery[]): void {
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
  }

  /**
   * Fills free slots from the queue (while the records of earlier answers keep up: maySend),
   * then claims more when a claim is wanted and the queue runs low.
   */
  function pump(): void {
    if (!isRunning(s)) return;
    const concurrency = concurrencyOf(s, deps.concurrency);
    while (maySend(s, concurrency) && s.queue.length > 0) void sendUnit(s.queue.shift()!);
    if (!isActive(s) || s.claims.running) return;
    // A retry came due: it goes ahead of whatever is queued.
    if (s.retries.wanted && s.claims.failures === 0) return void claims.claimDue();
    if (!s.claims.wanted || s.timers.linger !== undefined) return;
    // Refill before the slots run dry; big batches wait until the queue is empty, so a slow
    // destination never holds thousands of leased events that it cannot send yet.
    if (s.queue.length >= (maxEvents(s) > 1 ? 1 : concurrency)) return;
    void claims.claimAndQueue();
  }

  function idle(): Promise<void> {
    if (isIdle(s)) return Promise.resolve();
    return new Promise((r) => s.idleWaiters.push(r));
  }

  return {
    destinationId: initial.id,
    get inflight() {
      return s.inflight;
    },
    update(next, nextPlugin) {
      const wasActive = isActive(s);
      s.dest = next;
      s.plugin = nextPlugin;
      if (!isActive(s)) {
        flushHold(); // inactive now: hands the held deliveries back
        void units.release(s.queue.splice(0));
        wake.cancelLook();
      } else if (!wasActive) {
        s.claims.wanted = true;
        pump();
      }
    },
    notify: claims.notify,
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
    // Queued and sent now (pump), or (a batching destination) held lingerMs on a timer first (takeHandoff above).
    take(claimId, leaseUntil, deliveries) {
      takeHandoff(claimId, leaseUntil, deliveries);
      inFlight.took();
    },
    start() {
      if (s.phase === 'created') s.phase = 'running';
      inFlight.start();
      s.claims.wanted = true;
      pump();
    },
    async drainOnce() {
      if (!isActive(s)) return;
      const concurrency = concurrencyOf(s, deps.concurrency);
      const limit = claimLimit(s, concurrency);
      for (;;) {
        const { units: claimed, claimed: count } = await claims.claim(limit);
        s.queue.push(...claimed);
        const batch = s.queue.splice(0);
        for (let i = 0; i < batch.length; i += concurrency) await Promise.all(batch.slice(i, i + concurrency).map(sendUnit));
        await deps.recorder.drain();
        // Deliveries a receiver never processed were queued again while sending (per-event.ts).
        if ((count === 0 && s.queue.length === 0) || !isActive(s)) return;
      }
    },
    async stop() {
      s.phase = 'stopped';
      inFlight.stop();
      wake.stop();
      clearTimeout(s.timers.linger);
      flushHold(); // stopped now: hands the held deliveries back
      await units.release(s.queue.splice(0));
      await idle();
    },
  };
}
