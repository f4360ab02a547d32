// The dispatcher: a fan-out loop (accepted events → deliveries) and one send lane per
// destination, kept in step with the destinations table. Leases carry a per-process owner
// id; stop() stops claiming, lets in-flight sends finish within the grace, hands back
// every lease, and resolves. See README.md for the delivery model.
import { setMaxListeners } from 'node:events';
import type { PluginRegistry } from '../destinations/load-plugins.ts';
import type { RuleSet } from '../rules/rule-set.ts';
import type { Store } from '../store/types.ts';
import type { HashPool } from '../workers/pool.ts';
import { createAttemptRecorder } from './attempt-recorder.ts';
import { createEventSettler } from './event-settler.ts';
import { createRemap } from './remap.ts';
import { createTokenCache } from './oauth/token-cache.ts';
import type { DeliveryMetrics } from './delivery-metrics.ts';
import { fanOutOnce, HOLD_MS } from './fan-out.ts';
import { paceFanOut, PACE_PATIENCE_MS } from './fan-out-pace.ts';
import type { HttpSender } from './http-sender.ts';
import { createLane, type Lane, type LaneLogger } from './lane.ts';
import { isDeadLocalOwner, newOwnerId, ownerOf } from './owner-id.ts';
import { createRetryPolicy, storeErrorBackoffMs, type RetryPolicy } from './retry-policy.ts';
import { after } from '../poll-tick.ts';

export interface DispatcherOptions {
  store: Store;
  plugins: PluginRegistry;
  /** The rule watcher (or anything with its `current()`). */
  rules: { current(): RuleSet };
  /** Hashes identifiers for a whole fan-out batch; null hashes inline. */
  pool: HashPool | null;
  sender: HttpSender;
  logger: LaneLogger;
  metrics?: DeliveryMetrics;
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
  /** Deliveries each lane takes from the fan-out into memory at most; default 400 (a batching lane: two requests' worth). */
  handoffCap?: number;
  /** How long the fan-out waits for a lane without room for a batch; default PACE_PATIENCE_MS. */
  pacePatienceMs?: number;
  /**
   * The fan-out's wait after a pass that claimed less than a batch; default 50 ms. Each pass in
   * a row that claimed nothing doubles it, up to `pollMaxMs`: an idle fan-out looks at the
   * queue once a second, not 20 times (commits wake it at once; the look finds what nothing
   * announces: events queued by another process, a lapsed lease).
   */
  pollMs?: number;
  /** The longest wait between the idle fan-out's passes; default 1 s. */
  pollMaxMs?: number;
  /** Tests: how the fan-out waits between passes (raced with wake()); default a timer. */
  sleep?: (ms: number) => Promise<void>;
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

/** A second's wait is the thread's poll tick (poll-tick.ts): an idle thread wakes once for all its polls. */
const timerSleep = (ms: number) => new Promise<void>((r) => after(ms, r));

/** The fan-out's wait after `emptyPasses` passes in a row claimed nothing (0: the last one claimed some). */
export function fanOutWaitMs(emptyPasses: number, pollMs: number, pollMaxMs: number): number {
  return Math.min(Math.max(pollMs, pollMaxMs), pollMs * 2 ** Math.min(emptyPasses, 30));
}

export function createDispatcher(opts: DispatcherOptions): Dispatcher {
  const { store, plugins, logger } = opts;
  const clock = opts.clock ?? Date.now;
  const owner = opts.owner ?? newOwnerId();
  const leaseMs = opts.leaseMs ?? 60_000;
  const fanOutBatch = opts.fanOutBatch ?? 200;
  const pollMs = opts.pollMs ?? 50;
  const pollMaxMs = opts.pollMaxMs ?? 1_000;
  const sleep = opts.sleep ?? timerSleep;
  const refreshMs = opts.refreshMs ?? 1_000;
  const pacePatienceMs = opts.pacePatienceMs ?? PACE_PATIENCE_MS;
  const abort = new AbortController();
  setMaxListeners(0, abort.signal); // every in-flight send listens to it
  // Events whose fan-out handed deliveries off leave the queue once those have rows.
  const settler = createEventSettler(store.deliveries, logger, clock);
  const recorder = createAttemptRecorder(store.deliveries, undefined, { settler });
  let claimSeq = 0;
  const laneDeps = {
    store: store.deliveries,
    settler,
    remap: createRemap({ store, plugins, rules: opts.rules, pool: opts.pool, clock }),
    sender: opts.sender,
    // One token cache for every lane of this process; token requests go out through the same sender.
    tokens: createTokenCache({ send: (req) => opts.sender.send(req, abort.signal), clock }),
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
  // Events held for broken rules are leased to a claim of their own (releaseOwner(holdOwner) frees them all).
  const holdOwner = `${owner}#held`;
  let unstored = 0;
  const fanOutDeps = {
    store, plugins, rules: opts.rules, pool: opts.pool, clock, leaseMs, batchSize: fanOutBatch,
    hold: { claimId: `${holdOwner}#0`, ms: HOLD_MS },
    // A running lane takes its new deliveries straight from the fan-out, in memory: no row, no claim query.
    offer: (destinationId: string) => lanes.get(destinationId)?.offer() ?? null,
    unstoredId: () => --unstored,
  };
  // Each fan-out pass that commits leases under a new claim id: the events it handed off stay
  // queued under it until their deliveries have rows, and the next pass must not take them
  // again. A pass that failed keeps its id, so the next one takes its events back at once.
  let fanOutPass = 0;
  const fanOutClaim = () => `${owner}#fan-out.${fanOutPass.toString(36)}`;
  const lanes = new Map<string, Lane>();
  let running = false;
  let fanOutLoop: Promise<void> | undefined;
  let cancelRefresh = (): void => undefined;
  let wakeFanOut: (() => void) | undefined;
  let backingOff = false;

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
      const lane = lanes.get(d.id);
      if (lane) lane.update(d, plugins.get(d.type));
      else {
        const created = createLane(laneDeps, d, plugins.get(d.type));
        lanes.set(d.id, created);
        if (running) created.start();
      }
    }
    laneDeps.tokens.retain(seen);
    for (const [id, lane] of lanes) {
      if (seen.has(id)) continue;
      // Removed: once the lane has handed its leases back, what it still held is canceled
      // too (removal itself cancelled the rest).
      lanes.delete(id);
      void lane.stop()
        .then(() => store.deliveries.expireStranded(clock(), 0))
        .then((r) => { if (r.removed > 0) logger.info({ destination_id: id, canceled: r.removed }, 'pending deliveries of a removed destination canceled'); })
        .catch((err) => logger.error({ err, destination_id: id }, 'canceling deliveries of a removed destination failed'));
    }
  }

  /** The rule set of the last fan-out pass: when another replaces one that held scopes, what it held is looked at again. */
  let lastRules: RuleSet | undefined;

  async function fanOut(): Promise<number> {
    const rules = opts.rules.current();
    if (rules !== lastRules) {
      // Passes run one at a time, so every hold made under the old set is committed by now.
      if (lastRules !== undefined && lastRules.held.length > 0) await store.deliveries.releaseOwner(holdOwner, clock());
      lastRules = rules;
    }
    const claimId = fanOutClaim();
    const r = await fanOutOnce({ ...fanOutDeps, claimId, rules: { current: () => rules } });
    if (r.claimed > 0) fanOutPass++;
    for (const { event, rows } of r.mappingFailed) {
      logger.error({ event_seq: event.seq, script_id: event.event.scriptId, event_id: event.event.eventId, interrupted: event.interrupted, destinations: rows.length },
        'mapping this event stopped the delivery thread repeatedly: its deliveries are failed (mapping_failed) and it is not mapped again');
      for (const row of rows) opts.metrics?.mappingFailed.inc({ destination_type: row.destinationType });
    }
    settler.expect(claimId, r.handoffs.values());
    // A lane gone meanwhile (removed) stores what it was handed: pending, for its expiry.
    for (const [id, h] of r.handoffs) {
      const lane = lanes.get(id);
      if (lane) lane.take(h.claimId, h.leaseUntil, h.deliveries);
      else void settler.store(h.deliveries.map((d) => d.unstored!), clock())
        .catch((err) => logger.error({ err, destination_id: id }, 'storing deliveries for a removed destination failed'));
    }
    let unknown = false;
    for (const id of r.pendingByDestination.keys()) {
      const lane = lanes.get(id);
      if (lane) lane.notify();
      else unknown = true;
    }
    if (unknown) await refresh();
    return r.claimed;
  }


  async function runFanOut(): Promise<void> {
    let failures = 0;
    let emptyPasses = 0;
    while (running) {
      let claimed = 0;
      try {
        await paceFanOut(lanes, fanOutBatch, pacePatienceMs, () => running);
        if (!running) return;
        claimed = await fanOut();
        failures = 0;
      } catch (err) {
        // A store in trouble (locked, full) is not hammered: back off, one line per wait.
        const waitMs = storeErrorBackoffMs(++failures, Math.random);
        logger.error({ err, consecutive_failures: failures, retry_in_ms: waitMs }, 'fan-out failed; the claimed events are retried when their lease ends');
        backingOff = true; // commits do not cut a backoff short; stop() still does
        await Promise.race([sleep(waitMs), new Promise<void>((r) => (wakeFanOut = r))]);
        wakeFanOut = undefined;
        backingOff = false;
        continue;
      }
      if (!running) return;
      emptyPasses = claimed === 0 ? emptyPasses + 1 : 0;
      if (claimed < fanOutBatch) {
        await Promise.race([sleep(fanOutWaitMs(emptyPasses, pollMs, pollMaxMs)), new Promise<void>((r) => (wakeFanOut = r))]);
        wakeFanOut = undefined;
      } else {
        await new Promise((r) => setImmediate(r)); // let intake requests in between batches
      }
    }
  }

  /** Leases of processes on this host that died (kill -9) are released now, not at lease expiry. */
  async function recoverDeadOwners(): Promise<void> {
    const dead = new Set((await store.deliveries.leaseHolders()).map(ownerOf).filter(isDeadLocalOwner));
    for (const o of dead) {
      const n = await store.deliveries.releaseOwner(o, clock());
      logger.info({ owner: o, released: n }, 'released the leases of a process that is gone');
    }
  }

  return {
    owner,
    async start() {
      if (running) return;
      await recoverDeadOwners();
      await refresh();
      running = true;
      for (const lane of lanes.values()) lane.start();
      fanOutLoop = runFanOut();
      // On the thread's poll tick (poll-tick.ts) at the default second.
      const tick = () => {
        cancelRefresh = after(refreshMs, () => {
          refresh().catch((err) => logger.error({ err }, 'reading destinations failed')).finally(() => running && tick());
        });
      };
      tick();
    },
    async stop(graceMs = 5_000) {
      running = false;
      cancelRefresh();
      backingOff = false;
      wakeFanOut?.();
      await fanOutLoop;
      const stopped = Promise.all([...lanes.values()].map((l) => l.stop()));
      let timer: NodeJS.Timeout | undefined;
      const late = await Promise.race([stopped.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), graceMs)))]);
      clearTimeout(timer);
      if (late) {
        abort.abort(); // the sends still running are cut; their deliveries are handed back
        await stopped;
      }
      await recorder.drain();
      await settler.drain();
      await store.deliveries.releaseOwner(owner, clock());
    },
    wake() {
      if (!backingOff) wakeFanOut?.();
    },
    wakeAll() {
      // Another instance announced work (PostgreSQL NOTIFY): new events, or deliveries it fanned out.
      if (!backingOff) wakeFanOut?.();
      for (const lane of lanes.values()) lane.notify();
    },
    async runOnce() {
      await refresh();
      while ((await fanOut()) === fanOutBatch);
      await Promise.all([...lanes.values()].map((l) => l.drainOnce()));
      await recorder.drain();
      await settler.drain();
    },
  };
}
