// Pinterest's reply → success / retryable / permanent. 429 and 5xx are retried (with
// Retry-After when given), other 4xx are final; a 200 whose every event failed is final too,
// with Pinterest's first error message.
import { classifyHttpStatus, isSuccessStatus, retryAfterMs, type Classification, type PlatformResponse } from 'tracklane/sdk';

interface EventResult { status?: unknown; error_message?: unknown }

export function classifyResponse(res: PlatformResponse): Classification {
  const body = parse(res.body);
  if (isSuccessStatus(res.status)) {
    const results: EventResult[] = Array.isArray(body?.events) ? body.events : [];
    const failed = results.filter((e) => e?.status === 'failed');
    const first = failed.map((e) => e.error_message).find((m) => typeof m === 'string');
    const why = typeof first === 'string' ? `: ${first.slice(0, 300)}` : '';
    if (failed.length > 0 && failed.length === results.length) {
      return { outcome: 'permanent', message: `HTTP ${res.status}, every event failed${why}` };
    }
    const processed = typeof body?.num_events_processed === 'number' ? `events processed ${body.num_events_processed}` : 'accepted';
    return { outcome: 'success', message: failed.length > 0 ? `${processed}; ${failed.length} failed${why}` : processed };
  }
  const message = typeof body?.message === 'string' ? body.message.slice(0, 300) : undefined;
  const code = typeof body?.code === 'number' ? ` code ${body.code}` : '';
  const label = `HTTP ${res.status}${message !== undefined || code ? `, Pinterest error${code}${message ? `: ${message}` : ''}` : ''}`;
  return classifyHttpStatus(res.status, label, { redirectNote: ': redirect not followed', retryAfterMs: retryAfterMs(res.headers) });
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
