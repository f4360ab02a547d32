// Reddit's reply → success / retryable / permanent. A 2xx means every event of the
// request was processed (Reddit validates a request whole: one invalid event gives 400
// "There were N invalid conversion events. None were processed.", naming none: such a
// request is split until each invalid event is alone). 429 and 5xx are retried (with
// Retry-After when given); 400, 401, 403 and other 4xx are final.
import { classifyHttpStatus, isSuccessStatus, retryAfterMs, type Classification, type PlatformResponse } from 'tracklane/sdk';

/** Reddit's answer when it refused a whole request for invalid events. */
const NONE_PROCESSED = /none were processed/i;

export function classifyResponse(res: PlatformResponse): Classification {
  const body = parse(res.body);
  if (isSuccessStatus(res.status)) {
    const message = text(body?.data?.message);
    return message === undefined ? { outcome: 'success' } : { outcome: 'success', message };
  }
  const message = text(body?.error?.message) ?? text(body?.message) ?? text(body?.error);
  const label = `HTTP ${res.status}${message === undefined ? '' : `, Reddit error: ${message}`}`;
  const verdict = classifyHttpStatus(res.status, label, { redirectNote: ': redirect not followed', retryAfterMs: retryAfterMs(res.headers) });
  // Refused whole for invalid events it does not name: split the request until each invalid
  // event is alone (it then fails with this reason) and the valid ones go through.
  return res.status === 400 && message !== undefined && NONE_PROCESSED.test(message) ? { ...verdict, others: 'split' } : verdict;
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
