// Sending one unit, step by step: take a slot; hand the unit back unsent if its lease is too
// short or the lane stopped sending; send within the lane's limit (lane-timeouts.ts); judge
// the answer into delivery updates, each delivery by its own verdict (per-event.ts), queueing
// first what the receiver never processed; free the slot; record the attempt and what it sent
// (secrets masked: sent-request.ts; group commit); time its retries (lane-claims.ts); report it (metrics, log line); pause the lane when the record says the destination is paused. A
// record that fails leaves the lease to run out: the deliveries come due again. A destination
// configured with OAuth sends with a token from the shared cache (oauth/authorized-send.ts).
import type { OutboundRequest } from '../destinations/types.ts';
import type { SendResult } from './http-sender.ts';
import { sendForDestination } from './oauth/authorized-send.ts';
import { logDeliveryFailure, observeAttempt } from './lane-report.ts';
import { asNow, isActive, isIdle, type LaneState, type Unit, type LaneDeps } from './lane-state.ts';
import { noteAttempt, sendLimit, type SendLimit } from './lane-timeouts.ts';
import type { LaneClaims } from './lane-claims.ts';
import type { LaneUnits } from './lane-units.ts';
import { nextUpdate, verdictOf, withRow, type Verdict } from './retry-policy.ts';
import type { AttemptRecord, ClaimedDelivery, DeliveryUpdate, RecordResult } from './types.ts';
import { settle } from './per-event.ts';
import { sentRequest } from './sent-request.ts';

/** Pause reason of a destination whose token endpoint refused its refresh token (`invalid_grant`). */
export const REAUTHORIZE = 'reauthorize';

/** One send as it went: the result, the request as it went out (null: none did), and whether the grant was refused. */
interface Sent {
  result: SendResult;
  request: OutboundRequest | null;
  reauthorize: boolean;
}

/** What an answer means for the deliveries a request carried. */
interface Judgement {
  verdict: Verdict;
  /** 410 Gone: the receiver says "stop"; the destination pauses and these deliveries wait. */
  gone: boolean;
  /** The token endpoint refused the grant: the destination pauses (`reauthorize`) and these deliveries wait. */
  reauthorize: boolean;
  /** The deliveries this attempt settles, and their updates (same order). */
  settled: ClaimedDelivery[];
  updates: DeliveryUpdate[];
  /** Deliveries the receiver never processed, sent again at once (per-event.ts). */
  again: ClaimedDelivery[][];
  /** The attempt's message: the verdict's, and what is sent again. */
  message: string;
  at: number;
}

export function createLaneSend(deps: LaneDeps, s: LaneState, units: LaneUnits, log: Record<string, unknown>, pump: () => void, retries: Pick<LaneClaims, 'note'>) {
  /** Occupies a send slot; the returned function frees it once (and lets the lane send more). */
  function takeSlot(): () => void {
    s.inflight++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      s.inflight--;
      pump();
    };
  }

  /** Waited too long in the queue (less lease left than the send may take), or paused/disabled meanwhile. */
  const mustGoBack = (unit: Unit, limit: SendLimit) => deps.clock() + Math.min(limit.ms, deps.leaseMs / 2) >= unit.leaseUntil || !isActive(s);

  /** Sends with the lane's limit; a timeout under the lane's own limit says which limit it was. */
  async function sendWithin(unit: Unit, limit: SendLimit): Promise<Sent> {
    // deps.sender: http-sender.ts send (start-delivery.ts makes it), the request onto the wire.
    // sendForDestination calls `send` with the request as built, or, for a destination
    // configured with OAuth, with a bearer token first (oauth/authorized-send.ts).
    const send = (req: OutboundRequest) => deps.sender.send(req, deps.abort, limit.own ? limit.ms : undefined);
    const { result, sent, reauthorize } = await sendForDestination(deps.tokens, s.dest, s.plugin!.plugin, unit.request, send);
    if (result.kind === 'response') noteAttempt(s.timeouts, { timedOut: false, latencyMs: result.latencyMs });
    else if (result.errorClass === 'timeout') noteAttempt(s.timeouts, { timedOut: true });
    if (result.kind === 'error' && result.errorClass === 'timeout' && limit.own) {
      const why = limit.shortened ? ', shortened after a recent timeout' : '';
      return { result: { ...result, message: `${result.message} (limit ${limit.ms} ms${why})` }, request: sent, reauthorize };
    }
    return { result, request: sent, reauthorize };
  }

  /** Cut short by shutdown: not an attempt; due again at once. */
  const abortedByShutdown = (result: SendResult) => deps.abort.aborted && result.kind === 'error' && result.errorClass === 'other';

  function judge(unit: Unit, { result, reauthorize }: Sent): Judgement {
    const at = deps.clock();
    // As they stand now: one stored while it was sent is updated by its row id (lane-in-flight.ts).
    const deliveries = unit.deliveries.map((d) => asNow(s, d));
    const verdict = verdictOf(result, s.plugin!.plugin.classifyResponse, at);
    // 410 Gone is a receiver saying "stop", a refused grant a token only a person can renew:
    // the destination pauses until an operator resumes or updates it, and these deliveries
    // wait (pending, due at once) to go out then.
    const gone = result.kind === 'response' && result.response.status === 410;
    if (gone || reauthorize) {
      const updates = deliveries.map((d) => withRow(d, { id: d.id, status: 'pending', attempts: d.attempts + 1, nextAttemptAt: at }));
      return { verdict, gone, reauthorize, settled: deliveries, updates, again: [], message: verdict.message, at };
    }
    // Each delivery by its own verdict; a named one keeps its own reason.
    const { settled, again } = settle(deliveries, unit.request.eventIds.length, verdict);
    const updates = settled.map((x) => nextUpdate(deps.policy, x.delivery, x.verdict, at, x.own ? x.verdict.message : undefined));
    const resent = again.reduce((n, list) => n + list.length, 0);
    const message = resent === 0 ? verdict.message
      : `${verdict.message}; ${resent} event${resent === 1 ? '' : 's'} not processed, sent again${again.length > 1 ? ' in halves' : settled.length > 0 ? ' without the refused ones' : ''}`;
    return { verdict, gone, reauthorize, settled: settled.map((x) => x.delivery), updates, again, message, at };
  }

  /** Deliveries the receiver never processed go out again first, under the claim that holds them. */
  function sendAgain(unit: Unit, j: Judgement): void {
    if (j.again.length === 0) return;
    s.queue.unshift(...j.again.flatMap((list) => units.build(list, unit.claimId, unit.leaseUntil)));
  }

  function attemptRecord(unit: Unit, { result, request: sent }: Sent, j: Judgement): AttemptRecord {
    // A success keeps the body's digest, not its text: the trace rebuilds it from the event.
    // An event refused inside it keeps the text too: it is what the operator needs to read.
    const allDelivered = j.verdict.outcome === 'success' && j.updates.every((u) => u.status === 'delivered') && j.again.length === 0;
    const request = sent === null ? undefined : sentRequest(sent, s.plugin!.plugin, s.dest.settings, !allDelivered);
    return {
      claimId: unit.claimId,
      destinationId: s.dest.id,
      at: j.at,
      http: result.kind === 'response'
        ? { request, statusCode: result.response.status, latencyMs: result.latencyMs, responseBody: result.response.body, errorClass: null, outcome: j.verdict.outcome }
        : { request, statusCode: null, latencyMs: result.latencyMs, responseBody: null, errorClass: result.errorClass, outcome: j.verdict.outcome },
      message: j.message,
      updates: j.updates,
      pauseAfterMs: deps.pauseAfterMs,
      ...(j.gone ? { pauseNow: `the receiver answered 410 Gone: ${j.verdict.message}`.slice(0, 500) } : {}),
      ...(j.reauthorize ? { pauseNow: REAUTHORIZE } : {}),
    };
  }

  function report({ result }: Sent, j: Judgement, rec: RecordResult): void {
    observeAttempt(deps.metrics, s.dest.type, j.settled, j.updates, j.verdict, rec.applied, j.at);
    if ((j.verdict.outcome !== 'success' || j.updates.some((u) => u.status !== 'delivered')) && !j.gone && !j.reauthorize && j.settled.length > 0) {
      logDeliveryFailure(deps.logger, log, j.settled, j.updates, j.verdict, result.kind === 'response' ? result.response.status : null);
    }
  }

  /** The record paused the destination (failing too long, or 410 Gone): stop sending and hand the queue back. */
  function pauseIfRecorded(rec: RecordResult, j: Judgement): void {
    if (!rec.paused || s.dest.pausedAt !== null) return;
    s.dest = { ...s.dest, pausedAt: j.at };
    deps.logger.warn({ ...log, status_code: j.gone ? 410 : undefined, reason: j.reauthorize ? j.verdict.message : undefined }, j.gone
      ? 'destination paused: the receiver answered 410 Gone; resume with `tracklane deliveries resume` once it accepts events again'
      : j.reauthorize
        ? 'destination paused (reauthorize): the token endpoint refused the refresh token; give a new one with `destinations update --config`'
        : 'destination paused: failing with no success; resume with `tracklane deliveries resume` or `destinations update --enable`');
    void units.release(s.queue.splice(0));
  }

  /**
   * Records the attempt (the slot is already free), then reports it and pauses if the record
   * says so. Its deliveries count against the lane's record limit until the commit (maySend):
   * once it is in, the lane may send what waited for it.
   */
  async function recordAndReport(unit: Unit, sent: Sent, j: Judgement): Promise<void> {
    s.recording++;
    s.recordingDeliveries += j.settled.length;
    try {
      const rec = await deps.recorder.record(attemptRecord(unit, sent, j));
      retries.note(j.updates, j.at);
      report(sent, j, rec);
      pauseIfRecorded(rec, j);
    } finally {
      s.recording--;
      s.recordingDeliveries -= j.settled.length;
      pump();
    }
  }

  /** Sends one unit (its slot is taken before the first await) and records the attempt. */
  return async function sendUnit(unit: Unit): Promise<void> {
    const freeSlot = takeSlot();
    s.sending.add(unit);
    try {
      const limit = sendLimit(s.timeouts, s.dest.settings, deps.sendTimeoutMs);
      if (mustGoBack(unit, limit)) return void (await units.release([unit]));
      const sent = await sendWithin(unit, limit);
      if (abortedByShutdown(sent.result)) return void (await units.release([unit]));
      const j = judge(unit, sent);
      sendAgain(unit, j);
      // The slot is free once the reply is in; the record joins the next group commit, and
      // counts against the lane's record limit until it is committed.
      s.sending.delete(unit);
      const recorded = recordAndReport(unit, sent, j);
      freeSlot();
      await recorded;
    } catch (err) {
      // The lease runs out and the deliveries come due again: at-least-once, nothing lost.
      deps.logger.error({ ...log, err }, 'delivery attempt could not be recorded');
    } finally {
      s.sending.delete(unit);
      freeSlot();
      if (isIdle(s)) for (const f of s.idleWaiters.splice(0)) f();
    }
  };
}
