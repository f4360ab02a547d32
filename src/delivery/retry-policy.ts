// The retry policy, the one place that decides what an attempt's result means and when the
// next attempt is due. Schedule, jitter, clock and randomness are injected, so tests run
// the whole policy without waiting.
//
// Default schedule (delay after the Nth failed attempt; 11 attempts in all):
//   10 s, 1 min, 5 min, 30 min, 1 h, 2 h, 4 h, 8 h, 8 h, 8 h  → 31 h 36 min nominal,
//   each delay ±20 % jitter, so the last attempt lands between ≈25 h 17 min and ≈37 h 55 min
//   after the first: always more than 24 h. After the 11th failure the delivery is `dead`.
// Retry-After (from the plugin, or the header as delta-seconds or an HTTP date) is honoured
// up to RETRY_AFTER_MAX_MS (1 h): the wait is max(scheduled, min(Retry-After, 1 h)). A
// receiver can slow us down by up to an hour per attempt, never park a message for a year,
// and never make us retry sooner than scheduled. With every early attempt answered by a
// long Retry-After the last attempt lands at most ≈41 h 12 min after the first (each delay
// at most max(1.2 × scheduled, 1 h)). Timeouts and 429 wait at least 60 s.
import type { Classification, EventClassification, PlatformResponse } from '../destinations/types.ts';
import type { SendResult } from './http-sender.ts';
import type { ClaimedDelivery, DeliveryUpdate } from './types.ts';

const S = 1_000;
const M = 60 * S;
const H = 60 * M;

export const DEFAULT_SCHEDULE_MS: readonly number[] = [10 * S, M, 5 * M, 30 * M, H, 2 * H, 4 * H, 8 * H, 8 * H, 8 * H];
export const DEFAULT_JITTER = 0.2;
export const OVERLOAD_MIN_MS = 60 * S;
/** The longest wait a Retry-After can ask for; longer requests wait this long. */
export const RETRY_AFTER_MAX_MS = H;

/** What one attempt came to, whoever judged it (the plugin for replies, this module for transport errors). */
export type Verdict = EventVerdict & {
  /** The events the reply names, by index in the request: each is settled by its own verdict. */
  events?: ReadonlyMap<number, EventVerdict>;
  /** The events it does not name were never processed: send them again without the named ones, or split the request (Classification). */
  others?: 'resend' | 'split';
};

/** What the attempt came to for one event. */
export type EventVerdict =
  | { outcome: 'success'; message: string }
  | {
      outcome: 'retryable';
      message: string;
      /** The receiver asked for this wait. */
      retryAfterMs?: number;
      /** A timeout or 429: waits at least the overload minimum. */
      overload: boolean;
    }
  | { outcome: 'permanent'; message: string };

/** The delivery's next state. */
export type Decision =
  | { status: 'delivered' }
  | { status: 'failed' }
  | { status: 'dead' }
  | { status: 'pending'; delayMs: number; nextAttemptAt: number };

export interface RetryPolicyOptions {
  /** Delay after each failed attempt; its length + 1 is the number of attempts. */
  scheduleMs?: readonly number[];
  /** ± fraction applied to each scheduled delay. */
  jitter?: number;
  /** Least wait after a timeout or a 429. */
  overloadMinMs?: number;
  /** [0, 1) */
  random?: () => number;
  /** Ceiling on a receiver's Retry-After. */
  retryAfterMaxMs?: number;
}

export interface RetryPolicy {
  readonly scheduleMs: readonly number[];
  /** Attempts before a retryable delivery is `dead`. */
  readonly maxAttempts: number;
  /** The next state after `attempts` attempts (this one included) ended with `verdict` at `now`. */
  decide(attempts: number, verdict: EventVerdict, now: number): Decision;
}

/**
 * @example
 * const policy = createRetryPolicy({ scheduleMs: [50, 50], random: () => 0.5 }); // tests: no jitter, 3 attempts
 * policy.decide(1, { outcome: 'retryable', message: 'HTTP 500', overload: false }, now) // { status: 'pending', delayMs: 50, … }
 */
export function createRetryPolicy(opts: RetryPolicyOptions = {}): RetryPolicy {
  const scheduleMs = opts.scheduleMs ?? DEFAULT_SCHEDULE_MS;
  const jitter = opts.jitter ?? DEFAULT_JITTER;
  const overloadMinMs = opts.overloadMinMs ?? OVERLOAD_MIN_MS;
  const random = opts.random ?? Math.random;
  const retryAfterMaxMs = opts.retryAfterMaxMs ?? RETRY_AFTER_MAX_MS;
  return {
    scheduleMs,
    maxAttempts: scheduleMs.length + 1,
    decide(attempts, verdict, now) {
      if (verdict.outcome === 'success') return { status: 'delivered' };
      if (verdict.outcome === 'permanent') return { status: 'failed' };
      const base = scheduleMs[attempts - 1];
      if (base === undefined) return { status: 'dead' };
      const scheduled = base * (1 + jitter * (2 * random() - 1));
      let delay = scheduled;
      if (verdict.retryAfterMs !== undefined) delay = Math.max(scheduled, Math.min(verdict.retryAfterMs, retryAfterMaxMs));
      if (verdict.overload) delay = Math.max(delay, overloadMinMs);
      const delayMs = Math.round(delay);
      return { status: 'pending', delayMs, nextAttemptAt: now + delayMs };
    },
  };
}

/** `Retry-After` as delta-seconds or an HTTP date, in ms from `now`; undefined when absent or garbage. */
export function parseRetryAfter(headers: Record<string, string>, now: number): number | undefined {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === 'retry-after');
  const raw = key === undefined ? undefined : headers[key]?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (/^\d+$/.test(raw)) return Number(raw) * 1000;
  if (!/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(raw)) return undefined;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * One attempt's verdict. A reply is judged by the plugin (its platform knows which codes
 * inside a 200 or a 400 are worth retrying); a transport error by this table:
 *   timeout → retryable (overload); connect, dns, tls, reset, other → retryable;
 *   blocked (SSRF guard refused the address) → permanent.
 */
export function verdictOf(result: SendResult, classify: (res: PlatformResponse) => Classification, now: number): Verdict {
  if (result.kind === 'error') {
    if (result.errorClass === 'blocked') return { outcome: 'permanent', message: result.message };
    return { outcome: 'retryable', message: `${result.errorClass}: ${result.message}`, overload: result.errorClass === 'timeout' };
  }
  const res = result.response;
  let c: Classification;
  try {
    c = classify(res);
  } catch (err) {
    // Plugins must not throw here; if one does, judge by status alone rather than lose the delivery.
    const transient = res.status === 408 || res.status === 429 || res.status >= 500;
    const message = `HTTP ${res.status} (classifyResponse failed: ${(err as Error).message})`;
    c = res.status >= 200 && res.status < 300 ? { outcome: 'success' } : transient ? { outcome: 'retryable', message } : { outcome: 'permanent', message };
  }
  const verdict: Verdict = eventVerdict(c, res, now);
  if (c.others !== undefined) verdict.others = c.others;
  if (c.events !== undefined && c.events.length > 0) {
    verdict.events = new Map(c.events.map((e) => [e.index, eventVerdict(e, res, now)]));
  }
  return verdict;
}

function eventVerdict(c: EventClassification, res: PlatformResponse, now: number): EventVerdict {
  const message = c.message ?? `HTTP ${res.status}`;
  if (c.outcome !== 'retryable') return { outcome: c.outcome, message };
  const retryAfterMs = c.retryAfterMs ?? parseRetryAfter(res.headers, now);
  return { outcome: 'retryable', message, overload: res.status === 429, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
}

export const STORE_BACKOFF_BASE_MS = 250;
/** 5 s: a database back from an outage or a restart is used again within seconds. */
export const STORE_BACKOFF_MAX_MS = 5_000;

/**
 * The wait before a lane claims again after the `failures`-th store error in a row (disk
 * full, database locked or unreachable): 250 ms doubling to 5 s, ±20 % jitter, so a
 * failing store is never hammered and the log gets at most one line per wait.
 */
export function storeErrorBackoffMs(failures: number, random: () => number): number {
  const base = Math.min(STORE_BACKOFF_MAX_MS, STORE_BACKOFF_BASE_MS * 2 ** Math.min(20, failures - 1));
  return Math.round(base * (1 + 0.2 * (2 * random() - 1)));
}

/** A delivery's update after one more attempt that ended with `verdict`. */
export function nextUpdate(
  policy: RetryPolicy, d: Pick<ClaimedDelivery, 'id' | 'attempts' | 'unstored'>, verdict: EventVerdict, now: number, message?: string,
): DeliveryUpdate {
  const attempts = d.attempts + 1;
  const decision = policy.decide(attempts, verdict, now);
  const u: DeliveryUpdate = { id: d.id, status: decision.status, attempts, nextAttemptAt: decision.status === 'pending' ? decision.nextAttemptAt : null };
  if (message !== undefined) u.message = message;
  return withRow(d, u);
}

/**
 * The update of a handed-off delivery without a row carries the row to insert in that state;
 * any other updates its row by id. `d` is the delivery as its lane sees it when the attempt is
 * judged (lane-state.ts `asNow`: one stored while in flight has its row id and no `unstored`).
 */
export function withRow(d: Pick<ClaimedDelivery, 'unstored'>, u: DeliveryUpdate): DeliveryUpdate {
  return d.unstored === undefined ? u : { ...u, row: d.unstored };
}
