// A send lane's state in one place: its phase, where its next work comes from (handoffs from
// the fan-out, or claims from the store), what it holds in memory and its timers. The lane's
// parts (lane-handoffs, lane-claims, lane-send) read and change this object and nothing else.
import type { LoadedPlugin } from '../destinations/load-plugins.ts';
import type { OutboundRequest } from '../destinations/types.ts';
import { createTimeoutState, type TimeoutState } from './lane-timeouts.ts';
import type { ActiveDestination, ClaimedDelivery } from './types.ts';

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
  /** Retries this lane recorded (lane-retries.ts): claimed when they come due, ahead of the queue. */
  retries: {
    /** Their due times, not claimed yet (a min-heap). */
    due: number[];
    /** One has come due: the due retries are claimed next, into the head of the queue. */
    wanted: boolean;
    /** When `timers.retry` fires (null: not set). */
    timerAt: number | null;
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
   * The deliveries those attempts settle: answered, their record not committed yet. Bounded
   * (maySend): a crash now would send them again.
   */
  recordingDeliveries: number;
  timers: {
    /**
     * Cancels the next look at the store while no claim is wanted (or the next try after a
     * failed claim): a timer, or the thread's poll tick when a second away (poll-tick.ts).
     */
    wake?: () => void;
    /** A batching lane waits this out after notify() so that its claim fills a batch. */
    linger?: NodeJS.Timeout;
    /** The earliest retry noted comes due. */
    retry?: NodeJS.Timeout;
  };
  /** When saturated() first saw this lane short of room (null: it has room). */
  shortSince: number | null;
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
    retries: { due: [], wanted: false, timerAt: null },
    queue: [],
    hold: null,
    inflight: 0,
    sending: new Set(),
    recording: 0,
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
