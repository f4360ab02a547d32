// One destination's send lane: its own queue, concurrency and timers, so a slow or dead
// destination never holds up another. Work comes in three ways: handed off by the fan-out,
// not stored, under a claim the lane offered (lane-handoffs.ts), only while nothing is due in
// the store for it; else claimed from the store, due retries first, then oldest due first
// (lane-claims.ts); and the retries it recorded, claimed as they come due into the head of
// its queue (lane-claims.ts too). pump() moves queued requests into free slots (lane-send.ts)
// and asks for a claim when the queue runs low. One wake (lane-wake.ts) serves the due
// retries and the next look at the store. What a lane is given and the state all its parts
// share are in lane-state.ts.
import type { LoadedPlugin } from '../destinations/load-plugins.ts';
import { createLaneClaims } from './lane-claims.ts';
import { createLaneHandoffs } from './lane-handoffs.ts';
import { createLaneInFlight } from './lane-in-flight.ts';
import { createLaneSend } from './lane-send.ts';
import { claimLimit, concurrencyOf, createLaneState, isActive, isIdle, isRunning, maxEvents, maySend, type LaneDeps } from './lane-state.ts';
import { createLaneUnits } from './lane-units.ts';
import { createLaneWake } from './lane-wake.ts';
import type { PaceClock } from './pace-clock.ts';
import type { ActiveDestination, ClaimedDelivery } from './types.ts';

export type { LaneLogger } from './types.ts';
export type { LaneDeps } from './lane-state.ts';


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
  const handoffs = createLaneHandoffs(deps, s, units, pump);
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
        handoffs.flushHold(); // inactive now: hands the held deliveries back
        void units.release(s.queue.splice(0));
        wake.cancelLook();
      } else if (!wasActive) {
        s.claims.wanted = true;
        pump();
      }
    },
    notify: claims.notify,
    offer: handoffs.offer,
    saturated: handoffs.saturated,
    // Queued and sent now, or (a batching destination) held lingerMs on a timer first: lane-handoffs.ts take.
    take(claimId, leaseUntil, deliveries) {
      handoffs.take(claimId, leaseUntil, deliveries);
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
      handoffs.flushHold(); // stopped now: hands the held deliveries back
      await units.release(s.queue.splice(0));
      await idle();
    },
  };
}
