// One destination's send lane: its own queue, concurrency and timers, so a slow or dead
// destination never holds up another. Takes new deliveries straight from the fan-out
// (leased to it there) only while nothing is due in the store for it; otherwise it claims
// due ones with a lease, oldest due first (lingering briefly to fill batches), builds the
// requests as it queues them (signatures use that time), sends, and records each request's
// attempt through the shared group-commit recorder.
import type { LoadedPlugin } from '../destinations/load-plugins.ts';
import type { OutboundRequest } from '../destinations/types.ts';
import type { AttemptRecorder } from './attempt-recorder.ts';
import { buildRequestsFor } from './build-requests-for.ts';
import type { DeliveryMetrics } from './delivery-metrics.ts';
import type { HttpSender } from './http-sender.ts';
import type { LaneLogger } from './types.ts';
import { nextUpdate, storeErrorBackoffMs, verdictOf, type RetryPolicy } from './retry-policy.ts';
import { logDeliveryFailure, observeAttempt } from './lane-report.ts';
import type { ActiveDestination, ClaimedDelivery, DeliveryStore, DeliveryUpdate } from './types.ts';

export type { LaneLogger } from './types.ts';

export interface LaneDeps {
  store: Pick<DeliveryStore, 'claimDeliveries' | 'nextDue' | 'release'>;
  sender: HttpSender;
  policy: RetryPolicy;
  recorder: AttemptRecorder;
  logger: LaneLogger;
  metrics?: DeliveryMetrics;
  clock: () => number;
  nextClaimId(): string;
  leaseMs: number;
  /** Longest a send may take; a queued request whose lease has less left goes back unsent. */
  sendBudgetMs: number;
  lingerMs: number;
  concurrency: number;
  pauseAfterMs: number;
  /** Longest sleep while idle, so work queued by another process (a replay) is noticed. */
  idlePollMs: number;
  /** Handed-off deliveries a lane holds in memory at most (at least two claims' worth); default HANDOFF_CAP. */
  handoffCap?: number;
  /** Aborted when shutdown runs out of grace. */
  abort: AbortSignal;
  /** [0, 1), for the jitter of the store-error backoff. */
  random?: () => number;
}


interface Unit {
  request: OutboundRequest;
  deliveries: ClaimedDelivery[];
  claimId: string;
  leaseUntil: number;
}

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
   * `need` handed-off deliveries, and has been short of room for less than `patienceMs` (real
   * time, `nowMs` from performance.now()). A lane short for longer is slow: the fan-out goes
   * on without waiting, and this lane claims what is stored for it when it gets to it.
   */
  saturated(need: number, nowMs: number, patienceMs: number): boolean;
  /** Deliveries the fan-out stored leased to this lane's offered claim: queued for sending. */
  take(claimId: string, leaseUntil: number, deliveries: ClaimedDelivery[]): void;
  start(): void;
  /** Claims and sends until nothing is due, waiting for each batch (tests, runOnce). */
  drainOnce(): Promise<void>;
  /** Stops claiming, hands queued work back, and resolves when nothing is in flight. */
  stop(): Promise<void>;
}

/** At most this many deliveries wait in a lane's memory after a handoff (a slow destination takes less). */
const HANDOFF_CAP = 400;

export function createLane(deps: LaneDeps, initial: ActiveDestination, initialPlugin: LoadedPlugin | undefined): Lane {
  let dest = initial;
  let plugin = initialPlugin;
  let started = false;
  let stopped = false;
  let claiming = false;
  /**
   * Work is due in the store for this lane (rows the fan-out stored unleased, retries come
   * due, leases handed back): it claims as its queue runs low, and takes no handoffs until a
   * claim comes back short, so new work never overtakes what waits in the store.
   */
  let wantClaim = true;
  /** notify() calls so far: a claim that read the store before the last one cannot say it is empty. */
  let notified = 0;
  let inflight = 0;
  /** Attempts sent whose record is not committed yet. */
  let recording = 0;
  const queue: Unit[] = [];
  let wakeTimer: NodeJS.Timeout | undefined;
  let lingerTimer: NodeJS.Timeout | undefined;
  const idleWaiters: (() => void)[] = [];
  const log = { destination_id: dest.id, destination_type: dest.type };
  /** Claims that failed in a row (the store is in trouble: disk full, locked); 0 after a success. */
  let claimFailures = 0;
  /** When saturated() first saw this lane short of room (null: it has room). */
  let shortSince: number | null = null;

  const active = () => !stopped && dest.enabled && dest.pausedAt === null && plugin !== undefined;
  const maxEvents = () => Math.max(1, plugin?.plugin.batch.maxEvents ?? 1);
  // One claim fills a platform batch, or (one event per request) a few rounds of the slots:
  // claims and their commits stay few whatever the request size.
  const claimLimit = () => Math.max(maxEvents(), 4 * deps.concurrency);
  /** Deliveries queued (leased, not sent yet). A lane takes handed-off work only below its cap. */
  const queuedDeliveries = () => queue.reduce((n, u) => n + u.deliveries.length, 0);
  const handoffCap = () => Math.max(2 * claimLimit(), deps.handoffCap ?? HANDOFF_CAP);
  /** Handed-off deliveries this lane takes now: its cap less what it queues, sends and holds. */
  const room = () => handoffCap() - queuedDeliveries() - inflight * maxEvents() - (hold?.deliveries.length ?? 0);
  const lingers = () => deps.lingerMs > 0 && maxEvents() > 1;
  /**
   * Handed-off deliveries of a batching plugin, held for `lingerMs` under one claim so that
   * events fanned out in quick succession share a request (offer() keeps offering this claim).
   */
  let hold: { claimId: string; leaseUntil: number; deliveries: ClaimedDelivery[]; timer: NodeJS.Timeout } | null = null;

  function flushHold(): void {
    if (hold === null) return;
    const h = hold;
    hold = null;
    clearTimeout(h.timer);
    if (!started || stopped || !active()) {
      void release([{ claimId: h.claimId, deliveries: h.deliveries }]);
      return;
    }
    queue.push(...build(h.deliveries, h.claimId, h.leaseUntil));
    pump();
  }

  function pump(): void {
    if (!started || stopped) return;
    while (inflight < deps.concurrency && queue.length > 0) void sendUnit(queue.shift()!);
    if (!active() || !wantClaim || claiming || lingerTimer !== undefined) return;
    // Refill before the slots run dry; big batches wait until the queue is empty, so a slow
    // destination never holds thousands of leased events that it cannot send yet.
    if (queue.length >= (maxEvents() > 1 ? 1 : deps.concurrency)) return;
    void claimAndQueue();
  }

  async function claimAndQueue(): Promise<void> {
    claiming = true;
    try {
      const limit = claimLimit();
      const notifiedBefore = notified;
      const { units, claimed } = await claim(limit);
      claimFailures = 0;
      queue.push(...units);
      if (claimed < limit && notified === notifiedBefore) {
        wantClaim = false;
        await scheduleWake();
      }
    } catch (err) {
      // Never spin on a failing store: back off (capped, with jitter); one line per retry.
      claimFailures++;
      const retryInMs = storeErrorBackoffMs(claimFailures, deps.random ?? Math.random);
      deps.logger.error({ ...log, err, consecutive_failures: claimFailures, retry_in_ms: retryInMs },
        'claiming deliveries failed; backing off');
      wantClaim = false;
      wakeAfter(retryInMs);
    } finally {
      claiming = false;
    }
    pump();
  }

  async function scheduleWake(): Promise<void> {
    clearTimeout(wakeTimer);
    if (!started || stopped || !active()) return;
    const next = await deps.store.nextDue(dest.id);
    wakeAfter(next === null ? deps.idlePollMs : Math.min(deps.idlePollMs, Math.max(0, next - deps.clock())));
  }

  function wakeAfter(ms: number): void {
    clearTimeout(wakeTimer);
    if (!started || stopped) return;
    wakeTimer = setTimeout(() => {
      wakeTimer = undefined;
      void wakeIfDue();
    }, ms);
    wakeTimer.unref();
  }

  /** Claims (and stops taking handoffs) only when something is due now; else looks again later. */
  async function wakeIfDue(): Promise<void> {
    if (wantClaim || claimFailures > 0) {
      wantClaim = true; // after a store error: try the claim itself again
      pump();
      return;
    }
    try {
      const next = await deps.store.nextDue(dest.id);
      if (next !== null && next <= deps.clock()) {
        wantClaim = true;
        pump();
      } else await scheduleWake();
    } catch (err) {
      deps.logger.error({ ...log, err }, 'reading the next due delivery failed');
      wantClaim = true;
      pump();
    }
  }

  /** Leases up to `limit` due deliveries and turns them into requests. */
  async function claim(limit: number): Promise<{ units: Unit[]; claimed: number }> {
    const claimId = deps.nextClaimId();
    const now = deps.clock();
    const leaseUntil = now + deps.leaseMs;
    const claimed = await deps.store.claimDeliveries(dest.id, claimId, now, leaseUntil, limit);
    return { units: claimed.length > 0 ? build(claimed, claimId, leaseUntil) : [], claimed: claimed.length };
  }

  function build(claimed: ClaimedDelivery[], claimId: string, leaseUntil: number): Unit[] {
    const { units, unsendable } = buildRequestsFor(plugin!.plugin, dest.type, dest.settings, claimed, deps.clock());
    for (const u of unsendable) finish(claimId, u.deliveries, u.message);
    return units.map((u) => ({ ...u, claimId, leaseUntil }));
  }

  /** Ends deliveries as failed without an attempt (nothing could be sent). */
  function finish(claimId: string, deliveries: ClaimedDelivery[], message: string): void {
    const updates = deliveries.map((d): DeliveryUpdate => ({ id: d.id, status: 'failed', attempts: d.attempts, nextAttemptAt: null }));
    deps.recorder.record({ claimId, destinationId: dest.id, at: deps.clock(), http: null, message, updates, pauseAfterMs: 0 })
      .catch((err) => deps.logger.error({ ...log, err }, 'recording failed deliveries failed'));
  }

  async function release(units: readonly Pick<Unit, 'claimId' | 'deliveries'>[]): Promise<void> {
    for (const u of units) {
      await deps.store.release(u.claimId, deps.clock(), u.deliveries.map((d) => d.id))
        .catch((err) => deps.logger.error({ ...log, err }, 'releasing deliveries failed'));
    }
  }

  async function sendUnit(unit: Unit): Promise<void> {
    inflight++;
    let holdsSlot = true;
    const freeSlot = () => {
      if (!holdsSlot) return;
      holdsSlot = false;
      inflight--;
      pump();
    };
    try {
      if (deps.clock() + deps.sendBudgetMs >= unit.leaseUntil || !active()) {
        await release([unit]); // waited too long in the queue, or paused/disabled meanwhile
        return;
      }
      const result = await deps.sender.send(unit.request, deps.abort);
      if (deps.abort.aborted && result.kind === 'error' && result.errorClass === 'other') {
        await release([unit]); // cut short by shutdown: not an attempt; due again at once
        return;
      }
      const now = deps.clock();
      const verdict = verdictOf(result, plugin!.plugin.classifyResponse, now);
      // 410 Gone is a receiver saying "stop": the destination pauses until an operator resumes
      // it, and these deliveries wait (pending, due at once) to go out then.
      const gone = result.kind === 'response' && result.response.status === 410;
      const updates = gone
        ? unit.deliveries.map((d): DeliveryUpdate => ({ id: d.id, status: 'pending', attempts: d.attempts + 1, nextAttemptAt: now }))
        : unit.deliveries.map((d) => nextUpdate(deps.policy, d, verdict, now));
      // The slot is free once the reply is in; the record joins the next group commit.
      recording++;
      freeSlot();
      try {
        const rec = await deps.recorder.record({
          claimId: unit.claimId,
          destinationId: dest.id,
          at: now,
          http: result.kind === 'response'
            ? { statusCode: result.response.status, latencyMs: result.latencyMs, responseBody: result.response.body, errorClass: null, outcome: verdict.outcome }
            : { statusCode: null, latencyMs: result.latencyMs, responseBody: null, errorClass: result.errorClass, outcome: verdict.outcome },
          message: verdict.message,
          updates,
          pauseAfterMs: deps.pauseAfterMs,
          ...(gone ? { pauseNow: `the receiver answered 410 Gone: ${verdict.message}`.slice(0, 500) } : {}),
        });
        observeAttempt(deps.metrics, dest.type, unit.deliveries, updates, verdict, rec.applied, now);
        if (verdict.outcome !== 'success' && !gone) {
          logDeliveryFailure(deps.logger, log, unit.deliveries, updates, verdict, result.kind === 'response' ? result.response.status : null);
        }
        if (rec.paused && dest.pausedAt === null) {
          dest = { ...dest, pausedAt: now };
          deps.logger.warn({ ...log, status_code: gone ? 410 : undefined }, gone
            ? 'destination paused: the receiver answered 410 Gone; resume with `tracklane deliveries resume` once it accepts events again'
            : 'destination paused: failing with no success; resume with `tracklane deliveries resume` or `destinations update --enable`');
          void release(queue.splice(0));
        }
      } finally {
        recording--;
      }
    } catch (err) {
      // The lease runs out and the deliveries come due again: at-least-once, nothing lost.
      deps.logger.error({ ...log, err }, 'delivery attempt could not be recorded');
    } finally {
      freeSlot();
      if (inflight === 0 && recording === 0 && queue.length === 0) for (const f of idleWaiters.splice(0)) f();
    }
  }

  function idle(): Promise<void> {
    if (inflight === 0 && recording === 0 && queue.length === 0) return Promise.resolve();
    return new Promise((r) => idleWaiters.push(r));
  }

  return {
    destinationId: dest.id,
    get inflight() {
      return inflight;
    },
    update(next, nextPlugin) {
      const wasActive = active();
      dest = next;
      plugin = nextPlugin;
      if (!active()) {
        flushHold(); // inactive now: hands the held deliveries back
        void release(queue.splice(0));
        clearTimeout(wakeTimer);
      } else if (!wasActive) {
        wantClaim = true;
        pump();
      }
    },
    notify() {
      notified++;
      if (!started || !active()) return;
      if (deps.lingerMs > 0 && maxEvents() > 1 && !wantClaim && lingerTimer === undefined) {
        // Let more events arrive so the batch fills, then claim.
        lingerTimer = setTimeout(() => {
          lingerTimer = undefined;
          wantClaim = true;
          pump();
        }, deps.lingerMs);
        lingerTimer.unref();
        return;
      }
      wantClaim = true;
      pump();
    },
    offer() {
      // Stored work is due: new work goes to the store behind it and is claimed in turn.
      if (!started || !active() || claimFailures > 0 || wantClaim || lingerTimer !== undefined) return null;
      const r = room();
      if (r <= 0) return null;
      if (hold !== null) return { claimId: hold.claimId, leaseUntil: hold.leaseUntil, room: r };
      return { claimId: deps.nextClaimId(), leaseUntil: deps.clock() + deps.leaseMs, room: r };
    },
    saturated(need, nowMs, patienceMs) {
      // A lane serving its stored work takes no handoffs: nothing to wait for.
      if (!started || stopped || !active() || claimFailures > 0 || wantClaim || room() >= need) {
        shortSince = null;
        return false;
      }
      shortSince ??= nowMs;
      return nowMs - shortSince < patienceMs;
    },
    take(claimId, leaseUntil, deliveries) {
      if (deliveries.length === 0) return;
      if (!started || stopped || !active()) {
        // Stopped or paused while the fan-out committed: hand the lease back, due again at once.
        void release([{ claimId, deliveries }]);
        return;
      }
      if (!lingers()) {
        queue.push(...build(deliveries, claimId, leaseUntil));
        pump();
        return;
      }
      if (hold !== null && hold.claimId !== claimId) flushHold();
      if (hold === null) hold = { claimId, leaseUntil, deliveries: [], timer: setTimeout(flushHold, deps.lingerMs).unref() };
      hold.deliveries.push(...deliveries);
      if (hold.deliveries.length >= maxEvents()) flushHold();
    },
    start() {
      started = true;
      wantClaim = true;
      pump();
    },
    async drainOnce() {
      if (!active()) return;
      const limit = claimLimit();
      for (;;) {
        const { units, claimed } = await claim(limit);
        queue.push(...units);
        const batch = queue.splice(0);
        for (let i = 0; i < batch.length; i += deps.concurrency) await Promise.all(batch.slice(i, i + deps.concurrency).map(sendUnit));
        await deps.recorder.drain();
        if (claimed === 0 || !active()) return;
      }
    },
    async stop() {
      stopped = true;
      clearTimeout(wakeTimer);
      clearTimeout(lingerTimer);
      flushHold(); // stopped now: hands the held deliveries back
      await release(queue.splice(0));
      await idle();
    },
  };
}
