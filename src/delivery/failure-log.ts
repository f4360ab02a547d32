// The log line for a failed delivery request: info while retries remain (operators see
// failures as they happen, not only when they end), warn once deliveries end `dead` or
// `failed`. Event ids are the customer's own; at most 10 are listed per line.
import type { LaneLogger } from './lane.ts';
import type { Verdict } from './retry-policy.ts';
import type { ClaimedDelivery, DeliveryUpdate } from './types.ts';

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
