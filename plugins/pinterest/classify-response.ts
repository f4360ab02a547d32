// Pinterest's reply → success / retryable / permanent, per event. A 200 lists one result per
// event, in request order (`events[].status`, `error_message`, `warning_message`): each failed
// event fails with Pinterest's own message and the others are delivered. 429 and 5xx are
// retried (with Retry-After when given), other 4xx are final.
import { type Classification, classifyHttpStatus, isSuccessStatus, type PlatformResponse, retryAfterMs } from 'tracklane/sdk';

interface EventResult { status?: unknown; error_message?: unknown; warning_message?: unknown }

export function classifyResponse(res: PlatformResponse): Classification {
  const body = parse(res.body);
  if (isSuccessStatus(res.status)) return classifyEvents(res, Array.isArray(body?.events) ? body.events : [], body?.num_events_processed);
  const message = typeof body?.message === 'string' ? body.message.slice(0, 300) : undefined;
  const code = typeof body?.code === 'number' ? ` code ${body.code}` : '';
  const label = `HTTP ${res.status}${message !== undefined || code ? `, Pinterest error${code}${message ? `: ${message}` : ''}` : ''}`;
  return classifyHttpStatus(res.status, label, { redirectNote: ': redirect not followed', retryAfterMs: retryAfterMs(res.headers) });
}

/** A 2xx: each `failed` event (by its place in `events`, which follows the request) fails with its own message. */
function classifyEvents(res: PlatformResponse, results: EventResult[], processedCount: unknown): Classification {
  const failedAt = results.flatMap((e, index) => (e?.status === 'failed' ? [index] : []));
  const events = failedAt.map((index) => ({ index, outcome: 'permanent' as const, message: `HTTP ${res.status}, Pinterest event failed${why(results[index]?.error_message)}` }));
  const first = why(results[failedAt[0]]?.error_message);
  if (failedAt.length > 0 && failedAt.length === results.length) {
    return { outcome: 'permanent', message: `HTTP ${res.status}, every event failed${first}`, events };
  }
  const processed = typeof processedCount === 'number' ? `events processed ${processedCount}` : 'accepted';
  const warned = results.map((e) => e?.warning_message).find((m): m is string => typeof m === 'string' && m !== '');
  const notes = [processed, failedAt.length > 0 ? `${failedAt.length} failed${first}` : '', warned === undefined ? '' : `warning: ${warned.slice(0, 300)}`];
  const message = notes.filter((n) => n !== '').join('; ');
  return events.length > 0 ? { outcome: 'success', message, events } : { outcome: 'success', message };
}

function why(message: unknown): string {
  return typeof message === 'string' && message !== '' ? `: ${message.slice(0, 300)}` : '';
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function parse(text: string): Record<string, any> | null {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
