// What a send lane is given (LaneDeps: store, sender, policy, recorder, clock, limits) and its
// state in one place (LaneState): its phase, where its next work comes from (handoffs from the
// fan-out, or claims from the store), what it holds in memory and its wake. The lane's parts
// (lane.ts itself with the handoffs, lane-claims, lane-wake, lane-units, lane-send, lane-in-flight)
// take both from here, and read and change this object and nothing else.
import type { LoadedPlugin } from '../destinations/load-plugins.ts';
import type { OutboundRequest } from '../destinations/types.ts';
import { createTimeoutState, type TimeoutState } from './lane-timeouts.ts';
import type { AttemptRecorder } from './attempt-recorder.ts';
import type { DeliveryMetrics } from './delivery-metrics.ts';
import type { EventSettler } from './event-settler.ts';
import type { HttpSender } from './http-sender.ts';
import type { TokenCache } from './oauth/token-cache.ts';
import type { RetryPolicy } from './retry-policy.ts';
import type { DestinationRecord } from '../store/types.ts';
import type { PaceClock } from './pace-clock.ts';
import type { ActiveDestination, ClaimedDelivery, DeliveryStore, HandedOffDelivery, LaneLogger } from './types.ts';

export interface LaneDeps {
  store: Pick<DeliveryStore, 'claimDeliveries' | 'nextDue' | 'release'>;
  /** Stores handed-off deliveries that have no row yet, so their events can leave the queue. */
  settler: Pick<EventSettler, 'store'>;
  /** Maps again the claimed deliveries whose rows keep no item (delivered ones, replayed): fills in `item`. */
  remap?: (destination: DestinationRecord, claimed: readonly ClaimedDelivery[]) => Promise<void>;
  sender: HttpSender;
  /** Access tokens of destinations configured with OAuth (src/delivery/oauth/); absent: none refreshed. */
  tokens?: TokenCache;
  policy: RetryPolicy;
  recorder: AttemptRecorder;
  logger: LaneLogger;
  metrics?: DeliveryMetrics;
  clock: () => number;
  nextClaimId(): string;
  leaseMs: number;
  /**
   * The server's limit for one request, unless the destination sets `timeout_ms` (lane-timeouts.ts
   * shortens either after a timeout). A queued request whose lease has less left than its limit
   * (at most half the lease) goes back unsent.
   */
  sendTimeoutMs: number;
  lingerMs: number;
  /** Requests in flight per destination, unless it sets `max_concurrency`. */
  concurrency: number;
  pauseAfterMs: number;
  /** Longest sleep while idle, so work queued by another process (a replay) is noticed. */
  idlePollMs: number;
  /** The floor of the lane's handoff cap (lane.ts `handoffCap`); default HANDOFF_CAP. */
  handoffCap?: number;
  /** Aborted when shutdown runs out of grace. */
  abort: AbortSignal;
  /** [0, 1), for the jitter of the store-error backoff. */
  random?: () => number;
}

/** One request ready to go out, with the claim that leases the deliveries it carries. */
export interface Unit {
  request: OutboundRequest;
  deliveries: ClaimedDelivery[];
  claimId: string;
  leaseUntil: number;
}

/**
 * Handed-off deliveries of a batching plugin, held for `lingerMs` under one claim so that
 * events fanned out in quick succession share a request (offer() keeps offering this claim).
 */
export interface Hold {
  claimId: string;
  leaseUntil: number;
  deliveries: ClaimedDelivery[];
  timer: NodeJS.Timeout;
}

/** created → running (start) → stopped (stop); a stopped lane never runs again. */
export type LanePhase = 'created' | 'running' | 'stopped';

export interface LaneState {
  dest: ActiveDestination;
  plugin: LoadedPlugin | undefined;
  phase: LanePhase;
  claims: {
    /**
     * Work is due in the store for this lane (rows the fan-out stored unleased, retries come
     * due, leases handed back): it claims as its queue runs low, and takes no handoffs until a
     * claim comes back short, so new work never overtakes what waits in the store.
     */
    wanted: boolean;
    /** A claim query is running. */
    running: boolean;
    /** Claims that failed in a row (the store is in trouble: disk full, locked); 0 after a success. */
    failures: number;
    /** notify() calls so far: a claim that read the store before the last one cannot say it is empty. */
    notified: number;
  };
  /** Retries this lane recorded (lane-claims.ts): claimed when they come due, ahead of the queue. */
  retries: {
    /** Their due times, not claimed yet (a min-heap; lane-wake.ts wakes the lane for the first). */
    due: number[];
    /** One has come due: the due retries are claimed next, into the head of the queue. */
    wanted: boolean;
  };
  /** The lane's one wake (lane-wake.ts): for the first retry due or the next look at the store, whichever comes first. */
  wake: {
    /**
     * The next look at the store for due work while no claim is wanted (or the next try after a
     * failed claim); null: none planned. `mark`, `dueAt`: what the last look read (lane-wake.ts LookRead).
     */
    look: { at: number; onTick: boolean; mark: number | null; dueAt: number | null } | null;
    /** When the timer fires (null: not set), whether it is the look's, and its cancel. */
    at: number | null;
    forLook: boolean;
    cancel: (() => void) | null;
  };
  /** Requests built and leased, waiting for a send slot. */
  queue: Unit[];
  hold: Hold | null;
  /** Requests being sent. */
  inflight: number;
  /** The units being sent (until their answer is in). */
  sending: Set<Unit>;
  /** Attempts sent whose record is not committed yet. */
  recording: number;
  /**
   * Handed-off deliveries the in-flight sweep stored leased to their claim (lane-in-flight.ts),
   * with their row ids: from then on each is an ordinary claimed delivery (`asNow`). Kept here,
   * not on the delivery, which may be in a request being sent: no delivery object changes.
   */
  storedInFlight: WeakMap<ClaimedDelivery, number>;
  /**
   * The deliveries those attempts settle: answered, their record not committed yet. Bounded
   * (maySend): a crash now would send them again.
   */
  recordingDeliveries: number;
  timers: {
    /** A batching lane waits this out after notify() so that its claim fills a batch. */
    linger?: NodeJS.Timeout;
  };
  /**
   * Since saturated() first saw this lane short of room (null: it has room): where the pace's
   * clocks stood then, when (real time) it last freed room, and its room at the last look.
   */
  shortSince: { at: PaceClock; progressAt: number; room: number } | null;
  /** Recent answers and timeouts, for the shortened limit after a timeout (lane-timeouts.ts). */
  timeouts: TimeoutState;
  /** stop() callers waiting for nothing to be queued, in flight or recording. */
  idleWaiters: (() => void)[];
}

export function createLaneState(dest: ActiveDestination, plugin: LoadedPlugin | undefined): LaneState {
  return {
    dest,
    plugin,
    phase: 'created',
    claims: { wanted: true, running: false, failures: 0, notified: 0 },
    retries: { due: [], wanted: false },
    wake: { look: null, at: null, forLook: false, cancel: null },
    queue: [],
    hold: null,
    inflight: 0,
    sending: new Set(),
    recording: 0,
    storedInFlight: new WeakMap(),
    recordingDeliveries: 0,
    timers: {},
    shortSince: null,
    timeouts: createTimeoutState(),
    idleWaiters: [],
  };
}

export const isRunning = (s: LaneState): boolean => s.phase === 'running';

/** Not stopped, and the destination may be sent to: enabled, not paused, its plugin loaded. */
export const isActive = (s: LaneState): boolean =>
  s.phase !== 'stopped' && s.dest.enabled && s.dest.pausedAt === null && s.plugin !== undefined;

export const isIdle = (s: LaneState): boolean => s.inflight === 0 && s.recording === 0 && s.queue.length === 0;

/** Events per request the plugin takes (1: one event per request). */
export const maxEvents = (s: LaneState): number => Math.max(1, s.plugin?.plugin.batch.maxEvents ?? 1);

/**
 * Answered deliveries a lane lets wait for their record before it sends more: a request's
 * worth, and at least one per slot. A lane whose commits lag stops sending instead of running
 * seconds ahead of its records, so what a crash sends again is what was in flight or in the
 * commit under way, not a backlog of acknowledged sends.
 */
export const recordLimit = (s: LaneState, concurrency: number): number => Math.max(concurrency, maxEvents(s));

/** Whether the lane may start another send: a free slot, and its records keeping up with its answers. */
export const maySend = (s: LaneState, concurrency: number): boolean =>
  s.inflight < concurrency && s.recordingDeliveries < recordLimit(s, concurrency);

/** Requests in flight at most: the destination's `max_concurrency` when it sets one in range, else the server's. */
export function concurrencyOf(s: LaneState, serverConcurrency: number): number {
  const v = s.dest.settings.max_concurrency;
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 64 ? v : serverConcurrency;
}

// One claim fills a platform batch, or (one event per request) a few rounds of the slots:
// claims and their commits stay few whatever the request size.
export const claimLimit = (s: LaneState, concurrency: number): number => Math.max(maxEvents(s), 4 * concurrency);

/** Deliveries queued (leased, not sent yet). */
export const queuedDeliveries = (s: LaneState): number => s.queue.reduce((n, u) => n + u.deliveries.length, 0);

/** Whether fan-out handoffs are taken now: not while stored work is due, a claim lingers or claims fail. */
export const takesHandoffs = (s: LaneState): boolean =>
  isRunning(s) && isActive(s) && s.claims.failures === 0 && !s.claims.wanted && s.timers.linger === undefined;

/**
 * A delivery as it stands now, read when its attempt is judged or it is handed back: one the
 * in-flight sweep stored is a claimed delivery with its row id (a copy: its record updates
 * that row by id, handing it back releases it); any other is itself.
 */
export function asNow(s: LaneState, d: ClaimedDelivery): ClaimedDelivery {
  const id = s.storedInFlight.get(d);
  if (id === undefined) return d;
  const { unstored: _row, ...claimed } = d;
  return { ...claimed, id };
}

/** Whether a delivery has no row yet: handed off by the fan-out and not stored by the in-flight sweep since. */
export const isUnstored = (s: LaneState, d: ClaimedDelivery): d is HandedOffDelivery => d.unstored !== undefined && !s.storedInFlight.has(d);
