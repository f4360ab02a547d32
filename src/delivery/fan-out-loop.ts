// The dispatcher's fan-out loop: one pass at a time (fan-out.ts), each handing the lanes what
// it mapped for them; between passes it keeps pace with the lanes (below), waits when a pass
// claimed less than a batch (a commit wakes it at once), and backs off when the store fails.
// Its state is the dispatcher's (`FanOutState`, one object); the lanes and the settler are
// the dispatcher's too.
import type { RuleSet } from '../rules/rule-set.ts';
import type { DeliveryParts } from './delivery-parts.ts';
import type { EventSettler } from './event-settler.ts';
import { fanOutOnce, HOLD_MS } from './fan-out.ts';
import type { Lane } from './lane.ts';
import { storeErrorBackoffMs } from './retry-policy.ts';
import { busy, heardMark } from '../poll-tick.ts';
import { paceClock, type PaceClock } from './pace-clock.ts';

/**
 * The fan-out waits (polling every PACE_POLL_MS) while a running lane has no room for a whole
 * batch, up to PACE_PATIENCE_MS each time a lane runs short. When intake outruns sending,
 * events then wait in the dispatch queue and reach their lanes by handoff, instead of being
 * stored as unleased deliveries that each lane must claim back (a second write and a re-read
 * of every item and event). A fast lane frees a batch's room well within the patience (the
 * bench's webhook lane: 200 deliveries in ~0.1 s); a lane short for longer is slow (a
 * destination timing out, rate-limited, far away), and the fan-out goes on without it until
 * it has room again, so a slow destination costs the others at most this wait per time it
 * runs short, and its own deliveries are stored for it to claim.
 *
 * The patience is counted in the delivery thread's idle time (event-loop idle, not wall time):
 * a lane short of room while the thread is busy is not slow, it waits for the thread like
 * every other lane, and going on without it would only turn its deliveries into rows the thread
 * must write, claim back, re-read and parse (several times the CPU of a handoff: a backlog
 * drained on a loaded machine stored ~75 % of its one-event-per-request deliveries that way).
 * A lane that is slow leaves the thread waiting on sockets, so its patience runs out as before;
 * and however busy the thread, a lane that frees no room for PACE_BUSY_PATIENCE_FACTOR
 * (pace-clock.ts) × the patience of real time (hung) is not waited for.
 */
export const PACE_PATIENCE_MS = 250;
const PACE_POLL_MS = 2;

/** The fan-out loop's part of the dispatcher's state. */
export interface FanOutState {
  /** The loop while it runs. */
  loop: Promise<void> | undefined;
  /**
   * Passes that committed so far. Each pass leases under a claim id of its own: the events it
   * handed off stay queued under it until their deliveries have rows, and the next pass must
   * not take them again. A pass that failed keeps its id, so the next one takes its events back at once.
   */
  pass: number;
  /** Ends the wait between passes (a commit, stop()); set while the loop waits (wait() in createFanOutLoop). */
  wake: (() => void) | undefined;
  /**
   * A wake came while a pass ran (wakeFanOut with no wait to end): its commit may have landed
   * after the pass's claim read, so the loop does not wait before the next pass.
   */
  wokenDuringPass: boolean;
  /** Waiting out a store error: commits do not cut that wait short (stop() does). */
  backingOff: boolean;
  /** The rule set of the last pass: when another replaces one that held scopes, what it held is looked at again. */
  lastRules: RuleSet | undefined;
  /** The last id given to a handed-off delivery without a row (negative, never repeated in the process). */
  lastUnstoredId: number;
}

export const newFanOutState = (): FanOutState => ({ loop: undefined, pass: 0, wake: undefined, wokenDuringPass: false, backingOff: false, lastRules: undefined, lastUnstoredId: 0 });

/** What the loop is given by the dispatcher: delivery's parts, and the dispatcher's own. */
export interface FanOutLoopDeps extends DeliveryParts {
  clock: () => number;
  owner: string;
  leaseMs: number;
  batchSize: number;
  pollMs: number;
  pollMaxMs: number;
  pacePatienceMs: number;
  /** The pace's clocks (default paceClock: performance.now() and the thread's event-loop idle time). */
  paceClock?: () => PaceClock;
  /** Waits `ms`; `mark`: the announcement watch the last pass read under (poll-tick.ts heardMark()). */
  sleep: (ms: number, mark: number | null) => Promise<void>;
  settler: Pick<EventSettler, 'expect' | 'store'>;
  /** The dispatcher's lanes, by destination id. */
  lanes: ReadonlyMap<string, Lane>;
  /** Re-reads the destinations (a pass stored work for a destination without a lane). */
  refresh(): Promise<void>;
  running(): boolean;
}

/** The fan-out's wait after `emptyPasses` passes in a row claimed nothing (0: the last one claimed some). */
export function fanOutWaitMs(emptyPasses: number, pollMs: number, pollMaxMs: number): number {
  return Math.min(Math.max(pollMs, pollMaxMs), pollMs * 2 ** Math.min(emptyPasses, 30));
}

/** Wakes the fan-out: ends its wait, or, during a pass, makes it pass again without waiting. */
export function wakeFanOut(st: FanOutState): void {
  if (st.wake) st.wake();
  else st.wokenDuringPass = true;
}

export interface FanOutLoop {
  /** One pass: claims a batch, maps it, commits, hands each lane its deliveries. Resolves with the events claimed. */
  pass(): Promise<number>;
  /** Passes until the dispatcher stops running. */
  run(): Promise<void>;
}

export function createFanOutLoop(deps: FanOutLoopDeps, st: FanOutState): FanOutLoop {
  const { store, logger, clock, lanes, settler } = deps;
  // Events held for broken rules are leased to a claim of their own (releaseOwner(holdOwner) frees them all).
  const holdOwner = `${deps.owner}#held`;
  const passDeps = {
    store, plugins: deps.plugins, pool: deps.pool, clock, leaseMs: deps.leaseMs, batchSize: deps.batchSize,
    hold: { claimId: `${holdOwner}#0`, ms: HOLD_MS },
    // A running lane takes its new deliveries straight from the fan-out, in memory: no row, no claim query
    // (null while it does not take handoffs, lane-state.ts takesHandoffs: then they are stored and it claims them).
    offer: (destinationId: string) => lanes.get(destinationId)?.offer() ?? null,
    unstoredId: () => --st.lastUnstoredId,
  };

  async function pass(): Promise<number> {
    const rules = deps.rules.current();
    if (rules !== st.lastRules) {
      // Passes run one at a time, so every hold made under the old set is committed by now.
      if (st.lastRules !== undefined && st.lastRules.held.length > 0) await store.deliveries.releaseOwner(holdOwner, clock());
      st.lastRules = rules;
    }
    const claimId = `${deps.owner}#fan-out.${st.pass.toString(36)}`;
    const r = await fanOutOnce({ ...passDeps, claimId, rules: { current: () => rules } });
    if (r.claimed > 0) {
      st.pass++;
      busy();
    }
    for (const { event, rows } of r.mappingFailed) {
      logger.error({ event_seq: event.seq, script_id: event.event.scriptId, event_id: event.event.eventId, interrupted: event.interrupted, destinations: rows.length },
        'mapping this event stopped the delivery thread repeatedly: its deliveries are failed (mapping_failed) and it is not mapped again');
      for (const row of rows) deps.metrics?.mappingFailed.inc({ destination_type: row.destinationType });
    }
    // The handed-off deliveries' events stay queued until each has its row (event-settler.ts).
    settler.expect(claimId, r.handoffs.values());
    // A lane gone meanwhile (removed) stores what it was handed: pending, for its expiry.
    for (const [id, h] of r.handoffs) {
      const lane = lanes.get(id);
      // take queues the requests and sends them, or, for a batching destination, holds the deliveries lingerMs on a timer first (lane.ts takeHandoff).
      if (lane) lane.take(h.claimId, h.leaseUntil, h.deliveries);
      else void settler.store(h.deliveries.map((d) => d.unstored), clock())
        .catch((err) => logger.error({ err, destination_id: id }, 'storing deliveries for a removed destination failed'));
    }
    let unknown = false;
    for (const id of r.pendingByDestination.keys()) {
      const lane = lanes.get(id);
      if (lane) lane.notify();
      else unknown = true;
    }
    if (unknown) await deps.refresh();
    return r.claimed;
  }

  /** Waits `ms`, or until woken (st.wake); `mark`: as sleep's. */
  async function wait(ms: number, mark: number | null = null): Promise<void> {
    await Promise.race([deps.sleep(ms, mark), new Promise<void>((r) => (st.wake = r))]);
    st.wake = undefined;
  }

  async function run(): Promise<void> {
    let failures = 0;
    let emptyPasses = 0;
    while (deps.running()) {
      let claimed = 0;
      let mark: number | null = null;
      try {
        await keepPace();
        if (!deps.running()) return;
        st.wokenDuringPass = false;
        mark = heardMark();
        claimed = await pass();
        failures = 0;
      } catch (err) {
        // A store in trouble (locked, full) is not hammered: back off, one line per wait.
        const waitMs = storeErrorBackoffMs(++failures, Math.random);
        logger.error({ err, consecutive_failures: failures, retry_in_ms: waitMs }, 'fan-out failed; the claimed events are retried when their lease ends');
        st.backingOff = true;
        await wait(waitMs);
        st.backingOff = false;
        continue;
      }
      if (!deps.running()) return;
      emptyPasses = claimed === 0 ? emptyPasses + 1 : 0;
      if (claimed < deps.batchSize && !st.wokenDuringPass) await wait(fanOutWaitMs(emptyPasses, deps.pollMs, deps.pollMaxMs), mark);
      else await new Promise((r) => setImmediate(r)); // let intake requests in between batches
    }
  }

  /** Waits while a running lane cannot take a batch of handed-off deliveries, each lane at most the patience per time it runs short. */
  async function keepPace(): Promise<void> {
    for (;;) {
      let short = false;
      // Every lane is asked, so each one's short-of-room clock is kept.
      const at = (deps.paceClock ?? paceClock)();
      for (const lane of lanes.values()) if (lane.saturated(deps.batchSize, at, deps.pacePatienceMs)) short = true;
      if (!short || !deps.running()) return;
      await new Promise<void>((r) => setTimeout(r, PACE_POLL_MS).unref());
    }
  }

  return { pass, run };
}
