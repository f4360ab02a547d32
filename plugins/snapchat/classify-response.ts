// Snap's reply → success / retryable / permanent. 408, 429 and 5xx are retried (with
// Retry-After when given), other 4xx are final (Snap answers 400 INVALID for a missing
// field, an out-of-range time, unhashed or insufficient PII); a 2xx whose status is INVALID,
// or whose every event log is INVALID, is final too, with Snap's first reason.
import { classifyHttpStatus, isSuccessStatus, retryAfterMs, type Classification, type PlatformResponse } from 'tracklane/sdk';

type Json = Record<string, unknown>;

export function classifyResponse(res: PlatformResponse): Classification {
  const body = parse(res.body);
  if (isSuccessStatus(res.status)) {
    const logs = Array.isArray(body?.event_logs) ? body.event_logs.filter(isRecord) : [];
    const invalid = logs.filter((l) => l.status === 'INVALID');
    if (body?.status === 'INVALID' || (logs.length > 0 && invalid.length === logs.length)) {
      return { outcome: 'permanent', message: `HTTP ${res.status}, Snap found the events invalid${why(body, invalid)}` };
    }
    const status = typeof body?.status === 'string' ? body.status : 'accepted';
    return { outcome: 'success', message: invalid.length > 0 ? `${status}; ${invalid.length} of ${logs.length} events invalid${why(body, invalid)}` : status };
  }
  const label = `HTTP ${res.status}${body ? `, Snap error${why(body, [])}` : ''}`;
  return classifyHttpStatus(res.status, label, { redirectNote: ': redirect not followed', retryAfterMs: retryAfterMs(res.headers) });
}

/** `: <first error message or reason>`, at most 300 characters; empty when Snap gave none. */
function why(body: Json | null, logs: Json[]): string {
  const messages = [body, ...logs].flatMap((o) => {
    const errors = isRecord(o?.errors) ? o.errors : undefined;
    return [...(Array.isArray(errors?.error_msgs) ? errors.error_msgs : []), o?.reason];
  });
  const first = messages.find((m): m is string => typeof m === 'string' && m !== '');
  return first === undefined ? '' : `: ${first.slice(0, 300)}`;
}

function parse(text: string): Json | null {
  try {
    const v: unknown = JSON.parse(text);
    return isRecord(v) ? v : null;
  } catch {
    return null;
  }
}

function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
