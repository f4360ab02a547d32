// The dispatcher: a fan-out loop (accepted events → deliveries: fan-out-loop.ts) and one send
// lane per destination (lane.ts), kept in step with the destinations table. Its state is one
// object (DispatcherState). Leases carry a per-process owner id; stop() stops claiming, lets
// in-flight sends finish within the grace, hands back every lease, and resolves. See
// README.md for the delivery model.
import { setMaxListeners } from 'node:events';
import { createAttemptRecorder } from './attempt-recorder.ts';
import { createEventSettler } from './event-settler.ts';
import { createRemap } from './remap.ts';
import { createTokenCache } from './oauth/token-cache.ts';
import type { DeliveryParts } from './delivery-parts.ts';
import { createFanOutLoop, newFanOutState, PACE_PATIENCE_MS, wakeFanOut, type FanOutState } from './fan-out-loop.ts';
import type { PaceClock } from './pace-clock.ts';
import type { HttpSender } from './http-sender.ts';
import { createLane, type Lane, type LaneDeps } from './lane.ts';
import { isDeadLocalOwner, newOwnerId, ownerOf } from './owner-id.ts';
import { createRetryPolicy, type RetryPolicy } from './retry-policy.ts';
import { afterUnlessHeard } from '../heard-polls.ts';
import { busy, heardMark } from '../poll-tick.ts';

export interface DispatcherOptions extends DeliveryParts {
  sender: HttpSender;
  /** ms since epoch; default Date.now. */
  clock?: () => number;
  /** Default: createRetryPolicy() (the documented 24 h+ schedule). */
  schedule?: RetryPolicy;
  /** Lease owner id of this process; default host/pid/random. */
  owner?: string;
  /** How long a claim holds events or deliveries; default 60 s. */
  leaseMs?: number;
  /** The sender's total timeout (unless a destination sets `timeout_ms`); a request is not started with less lease than this left. Default 15 s. */
  sendTimeoutMs?: number;
  /** Wait after new work arrives before claiming a batch (batching plugins); default 50 ms. */
  lingerMs?: number;
  /** Requests in flight per destination (unless it sets `max_concurrency`); default 8. */
  perDestinationConcurrency?: number;
  /** Pause a destination failing with no success this long; 0 never. Default 24 h. */
  pauseAfterMs?: number;
  /** Events per fan-out batch; default 200. */
  fanOutBatch?: number;
  /** The floor of each lane's handoff cap, the most it takes from the fan-out into memory (lane.ts `handoffCap`); default HANDOFF_CAP. */
  handoffCap?: number;
  /** How long the fan-out waits for a lane without room for a batch; default PACE_PATIENCE_MS. */
  pacePatienceMs?: number;
  /** The clocks that patience is kept by (default pace-clock.ts paceClock: real time and the thread's idle time). */
  paceClock?: () => PaceClock;
  /**
   * The fan-out's wait after a pass that claimed less than a batch; default 50 ms. Each pass in
   * a row that claimed nothing doubles it, up to `pollMaxMs`: an idle fan-out looks at the
   * queue once a second, not 20 times (commits wake it at once; the look finds what nothing
   * announces: events queued by another process, a lapsed lease).
   */
  pollMs?: number;
  /** The longest wait between the idle fan-out's passes; default 1 s. */
  pollMaxMs?: number;
  /**
   * Tests: how the fan-out waits between passes (raced with wake()), `mark` the announcement
   * watch its last pass read under (poll-tick.ts heardMark()); default a timer.
   */
  sleep?: (ms: number, mark: number | null) => Promise<void>;
  /** How often destinations are re-read and idle lanes look for work; default 1 s. */
  refreshMs?: number;
}

export interface Dispatcher {
  readonly owner: string;
  start(): Promise<void>;
  /** Stops claiming, waits for in-flight sends up to `graceMs` (then aborts them), hands back every lease. */
  stop(graceMs?: number): Promise<void>;
  /** One full pass without timers: fan out everything queued, then send everything due now. */
  runOnce(): Promise<void>;
  /** New work was committed (an intake commit): fan out now instead of at the next poll. */
  wake(): void;
  /** Wakes the fan-out and every send lane (work announced by another instance). */
  wakeAll(): void;
}

/**
 * A second's wait is the thread's poll tick (poll-tick.ts): an idle thread wakes once for all
 * its polls; and on a quiet tick, what announcements stand in for does not look (afterUnlessHeard).
 */
const timerSleep = (ms: number, mark: number | null) => new Promise<void>((r) => afterUnlessHeard(ms, mark, r));

/** The dispatcher's state, in one object. */
export interface DispatcherState {
  /** Between start() and stop(). */
  running: boolean;
  /** One send lane per destination, by id (refresh() keeps them in line with the table). */
  lanes: Map<string, Lane>;
  /** Cancels the next re-read of the destinations. */
  cancelRefresh: () => void;
  fanOut: FanOutState;
}

export function createDispatcher(opts: DispatcherOptions): Dispatcher {
  const { store, plugins, logger } = opts;
  const clock = opts.clock ?? Date.now;
  const owner = opts.owner ?? newOwnerId();
  const leaseMs = opts.leaseMs ?? 60_000;
  const fanOutBatch = opts.fanOutBatch ?? 200;
  const refreshMs = opts.refreshMs ?? 1_000;
  const abort = new AbortController();
  setMaxListeners(0, abort.signal); // every in-flight send listens to it
  const st: DispatcherState = { running: false, lanes: new Map(), cancelRefresh: () => undefined, fanOut: newFanOutState() };
  // Events whose fan-out handed deliveries off leave the queue once those have rows.
  const settler = createEventSettler(store.deliveries, logger, clock);
  const recorder = createAttemptRecorder(store.deliveries, undefined, { settler });
  // One token cache for every lane of this process; token requests go out through the same sender.
  const tokens = createTokenCache({ send: (req) => opts.sender.send(req, abort.signal), clock });
  let claimSeq = 0;
  const laneDeps: LaneDeps = {
    store: store.deliveries,
    settler,
    remap: createRemap({ store, plugins, rules: opts.rules, pool: opts.pool, clock }),
    sender: opts.sender,
    tokens,
    policy: opts.schedule ?? createRetryPolicy(),
    recorder,
    logger,
    metrics: opts.metrics,
    clock,
    nextClaimId: () => `${owner}#${(++claimSeq).toString(36)}`,
    leaseMs,
    sendTimeoutMs: opts.sendTimeoutMs ?? 15_000,
    lingerMs: opts.lingerMs ?? 50,
    concurrency: Math.max(1, opts.perDestinationConcurrency ?? 8),
    pauseAfterMs: opts.pauseAfterMs ?? 24 * 3_600_000,
    idlePollMs: refreshMs,
    handoffCap: opts.handoffCap,
    abort: abort.signal,
  };
  const fanOut = createFanOutLoop({
    store, plugins, rules: opts.rules, pool: opts.pool, logger, metrics: opts.metrics, clock, owner, leaseMs,
    batchSize: fanOutBatch, pollMs: opts.pollMs ?? 50, pollMaxMs: opts.pollMaxMs ?? 1_000,
    pacePatienceMs: opts.pacePatienceMs ?? PACE_PATIENCE_MS, paceClock: opts.paceClock, sleep: opts.sleep ?? timerSleep,
    settler, lanes: st.lanes, refresh, running: () => st.running,
  }, st.fanOut);

  /** Brings the lanes in line with the destinations table: new, changed, paused, resumed, removed. */
  async function refresh(): Promise<void> {
    const active = await store.deliveries.activeDestinations();
    const seen = new Set<string>();
    for (let d of active) {
      seen.add(d.id);
      // Any change to a paused destination (`destinations update … --enable`) resumes it.
      if (d.pausedAt !== null && d.pausedDestinationUpdatedAt !== null && d.updatedAt !== d.pausedDestinationUpdatedAt) {
        const { due } = await store.deliveries.resume(d.id, clock());
        logger.info({ destination_id: d.id, due }, 'destination resumed after an update');
        d = { ...d, pausedAt: null, pausedDestinationUpdatedAt: null };
      }
      const lane = st.lanes.get(d.id);
      if (lane) lane.update(d, plugins.get(d.type));
      else {
        const created = createLane(laneDeps, d, plugins.get(d.type));
        st.lanes.set(d.id, created);
        if (st.running) created.start();
      }
    }
    tokens.retain(seen);
    for (const [id, lane] of st.lanes) {
      if (seen.has(id)) continue;
      // Removed: once the lane has handed its leases back, what it still held is canceled
      // too (removal itself cancelled the rest).
      st.lanes.delete(id);
      void lane.stop()
        .then(() => store.deliveries.expireStranded(clock(), 0))
        .then((r) => { if (r.removed > 0) logger.info({ destination_id: id, canceled: r.removed }, 'pending deliveries of a removed destination canceled'); })
        .catch((err) => logger.error({ err, destination_id: id }, 'canceling deliveries of a removed destination failed'));
    }
  }

  /**
   * Re-reads the destinations every refreshMs: on the thread's poll tick (poll-tick.ts) at the
   * default second, but for its quiet ticks (every change is announced; `mark`: the watch the
   * last read began under).
   */
  function refreshLater(mark: number | null): void {
    st.cancelRefresh = afterUnlessHeard(refreshMs, mark, () => {
      const next = heardMark();
      refresh().catch((err) => logger.error({ err }, 'reading destinations failed')).finally(() => st.running && refreshLater(next));
    });
  }

  /** Leases of processes on this host that died (kill -9) are released now, not at lease expiry. */
  async function recoverDeadOwners(): Promise<void> {
    const dead = new Set((await store.deliveries.leaseHolders()).map(ownerOf).filter(isDeadLocalOwner));
    for (const o of dead) {
      const n = await store.deliveries.releaseOwner(o, clock());
      logger.info({ owner: o, released: n }, 'released the leases of a process that is gone');
    }
  }

  /** Waits for the lanes to stop, up to `graceMs`; then cuts the sends still running (their deliveries are handed back). */
  async function stopLanes(graceMs: number): Promise<void> {
    const stopped = Promise.all([...st.lanes.values()].map((l) => l.stop()));
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([stopped.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), graceMs)))]);
    clearTimeout(timer);
    if (late) {
      abort.abort();
      await stopped;
    }
  }

  return {
    owner,
    async start() {
      if (st.running) return;
      await recoverDeadOwners();
      const mark = heardMark();
      await refresh();
      st.running = true;
      for (const lane of st.lanes.values()) lane.start();
      st.fanOut.loop = fanOut.run();
      refreshLater(mark);
    },
    async stop(graceMs = 5_000) {
      st.running = false;
      st.cancelRefresh();
      st.fanOut.backingOff = false;
      st.fanOut.wake?.();
      await st.fanOut.loop;
      await stopLanes(graceMs);
      await recorder.drain();
      await settler.drain();
      await store.deliveries.releaseOwner(owner, clock());
    },
    // An intake commit's wake (delivery-thread-host.ts → in-delivery-thread.ts): the next pass finds the
    // events itself, since the fan-out reads accepted events from the store (src/store/*/dispatch-queue.ts).
    // next: fan-out-loop.ts wakeFanOut ends run()'s wait; run() → pass() → fan-out.ts fanOutOnce.
    wake() {
      busy();
      if (!st.fanOut.backingOff) wakeFanOut(st.fanOut);
    },
    wakeAll() {
      busy();
      // Another instance announced work (PostgreSQL NOTIFY): new events, or deliveries it fanned out.
      if (!st.fanOut.backingOff) wakeFanOut(st.fanOut);
      for (const lane of st.lanes.values()) lane.notify();
    },
    async runOnce() {
      await refresh();
      while ((await fanOut.pass()) === fanOutBatch);
      await Promise.all([...st.lanes.values()].map((l) => l.drainOnce()));
      await recorder.drain();
      await settler.drain();
    },
  };
}
