// What a lane reports about each attempt: the metrics, and the log line for a failed
// request — info while retries remain (operators see failures as they happen, not only
// when they end), warn once deliveries end `dead` or `failed`. Event ids are the
// customer's own; at most 10 are listed per line.
import type { DeliveryMetrics } from './delivery-metrics.ts';
import type { LaneLogger } from './types.ts';
import type { Verdict } from './retry-policy.ts';
import type { ClaimedDelivery, DeliveryUpdate } from './types.ts';

/** Attempt and delivery counters, and the lag of what was delivered; only updates the store applied count. */
export function observeAttempt(
  m: DeliveryMetrics | undefined, type: string, deliveries: readonly Pick<ClaimedDelivery, 'receivedAt'>[],
  updates: readonly DeliveryUpdate[], verdict: Verdict, applied: readonly number[], now: number,
): void {
  if (!m) return;
  m.attempts.inc({ destination_type: type, outcome: verdict.outcome });
  const done = new Set(applied);
  // Counted per status, one increment each (a batch request carries up to 1,000 deliveries).
  const counts = new Map<string, number>();
  const lagLabels = { destination_type: type };
  updates.forEach((u, i) => {
    if (!done.has(u.id)) return;
    const status = u.status === 'pending' ? 'retry' : u.status;
    counts.set(status, (counts.get(status) ?? 0) + 1);
    if (u.status === 'delivered') m.lag.observe(lagLabels, Math.max(0, now - deliveries[i].receivedAt) / 1000);
  });
  for (const [status, n] of counts) m.deliveries.inc({ destination_type: type, status }, n);
}

export function logDeliveryFailure(
  logger: LaneLogger,
  base: Record<string, unknown>,
  deliveries: readonly Pick<ClaimedDelivery, 'eventId'>[],
  updates: readonly DeliveryUpdate[],
  verdict: Verdict,
  statusCode: number | null,
): void {
  const eventIds = [...new Set(deliveries.map((d) => d.eventId))];
  const line = {
    ...base, status_code: statusCode, error: verdict.message, deliveries: updates.length,
    event_ids: eventIds.slice(0, 10), attempts: updates[0]?.attempts,
  };
  const terminal = updates.find((u) => u.status === 'dead' || u.status === 'failed');
  if (terminal) {
    logger.warn({ ...line, status: terminal.status }, terminal.status === 'dead'
      ? 'delivery dead: retries exhausted; `tracklane deliveries replay` sends it again'
      : 'delivery failed: the platform refused it permanently; fix the cause, then `tracklane deliveries replay`');
    return;
  }
  const next = updates.find((u) => u.nextAttemptAt !== null)?.nextAttemptAt ?? null;
  logger.info({ ...line, next_attempt_at: next === null ? null : new Date(next).toISOString() }, 'delivery attempt failed; will retry');
}
