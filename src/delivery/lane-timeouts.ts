// How long a lane lets a request take. The full limit is the destination's `timeout_ms`, else
// the server's. After a request times out, the lane's next SHORT_FOR answers are waited for at
// most SHORT_FACTOR × the slowest of its last ANSWERS answers (at least MIN_TIMEOUT_MS, never
// more than the full limit): a receiver that hangs on some requests then holds a slot about a
// second per hang instead of the full limit, while one that answers slowly but steadily keeps
// the time its answers take. Each further timeout starts the count again.

/** The shortest limit, also the lowest `timeout_ms` a destination may set. */
export const MIN_TIMEOUT_MS = 1_000;
/** Answer latencies remembered. */
export const ANSWERS = 100;
/** Answers after a timeout that still get the shortened limit. */
export const SHORT_FOR = 100;
export const SHORT_FACTOR = 4;

export interface TimeoutState {
  /** Latencies of the last ANSWERS answers (any HTTP status), a ring. */
  answers: number[];
  /** Next slot of the ring to write. */
  next: number;
  /** Answers since the last timeout; null: no timeout yet. */
  sinceTimeout: number | null;
}

export const createTimeoutState = (): TimeoutState => ({ answers: [], next: 0, sinceTimeout: null });

export interface SendLimit {
  ms: number;
  /** Less than the full limit, because of a recent timeout. */
  shortened: boolean;
  /** The destination sets its own timeout, or the limit is shortened: the sender must be told. */
  own: boolean;
}

/** The limit for the next request of this lane (`serverMs`: the server's timeout). */
export function sendLimit(t: TimeoutState, settings: Record<string, unknown>, serverMs: number): SendLimit {
  const own = ownTimeout(settings);
  const full = own ?? serverMs;
  if (t.sinceTimeout === null || t.sinceTimeout >= SHORT_FOR) return { ms: full, shortened: false, own: own !== undefined };
  const slowest = t.answers.reduce((m, v) => Math.max(m, v), 0);
  const ms = Math.min(full, Math.max(MIN_TIMEOUT_MS, SHORT_FACTOR * slowest));
  return ms < full ? { ms, shortened: true, own: true } : { ms: full, shortened: false, own: own !== undefined };
}

/** An attempt ended with an answer (any status) after `latencyMs`, or timed out. */
export function noteAttempt(t: TimeoutState, outcome: { timedOut: true } | { timedOut: false; latencyMs: number }): void {
  if (outcome.timedOut) {
    t.sinceTimeout = 0;
    return;
  }
  t.answers[t.next] = outcome.latencyMs;
  t.next = (t.next + 1) % ANSWERS;
  if (t.sinceTimeout !== null) t.sinceTimeout++;
}

/** The destination's `timeout_ms`, when it sets one in range (the settings schema checks it; a plugin's own schema may not). */
function ownTimeout(settings: Record<string, unknown>): number | undefined {
  const v = settings.timeout_ms;
  return typeof v === 'number' && Number.isInteger(v) && v >= MIN_TIMEOUT_MS && v <= 30_000 ? v : undefined;
}

