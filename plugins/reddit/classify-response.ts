// Reddit's reply → success / retryable / permanent. A 2xx means every event of the
// request was processed (Reddit validates a request whole: one invalid event gives 400
// "There were N invalid conversion events. None were processed."). 429 and 5xx are
// retried (with Retry-After when given); 400, 401, 403 and other 4xx are final.
import { classifyHttpStatus, isSuccessStatus } from '../../src/destinations/http-status.ts';
import { retryAfterMs } from '../../src/destinations/retry-after.ts';
import type { Classification, PlatformResponse } from '../../src/destinations/types.ts';

export function classifyResponse(res: PlatformResponse): Classification {
  const body = parse(res.body);
  if (isSuccessStatus(res.status)) {
    const message = text(body?.data?.message);
    return message === undefined ? { outcome: 'success' } : { outcome: 'success', message };
  }
  const message = text(body?.error?.message) ?? text(body?.message) ?? text(body?.error);
  const label = `HTTP ${res.status}${message === undefined ? '' : `, Reddit error: ${message}`}`;
  return classifyHttpStatus(res.status, label, { redirectNote: ': redirect not followed', retryAfterMs: retryAfterMs(res.headers) });
}

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v.slice(0, 300) : undefined;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function parse(body: string): Record<string, any> | null {
  try {
    const v: unknown = JSON.parse(body);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
