// Snap's reply → success / retryable / permanent, per event where Snap says which. 408, 429
// and 5xx are retried (with Retry-After when given); other 4xx are final. Snap answers each
// event it judged: `event_logs[]` (from /events/validate) name events by index (`event`), and
// each INVALID one fails with Snap's own messages while the others are delivered. A refusal
// (`status: INVALID`, 400 for a missing field, an out-of-range time, unhashed or insufficient
// PII) that names its event (`event`) fails that one and sends the others again without it;
// one naming none is split until the invalid event is alone. Snap deduplicates on event_id,
// so an event sent again that Snap had kept is not counted twice.
import { type Classification, classifyHttpStatus, isSuccessStatus, type PlatformResponse, retryAfterMs } from 'tracklane/sdk';

type Json = Record<string, unknown>;

export function classifyResponse(res: PlatformResponse): Classification {
  const body = parse(res.body);
  const logs = Array.isArray(body?.event_logs) ? body.event_logs.filter(isRecord) : [];
  if (logs.length > 0 && (isSuccessStatus(res.status) || res.status === 400)) return classifyLogs(res, body, logs);
  if (isSuccessStatus(res.status)) {
    return body?.status === 'INVALID' ? refused(res, body, { outcome: 'permanent', message: `HTTP ${res.status}, Snap found the events invalid${why(body, [])}` })
      : { outcome: 'success', message: typeof body?.status === 'string' ? body.status : 'accepted' };
  }
  const label = `HTTP ${res.status}${body ? `, Snap error${why(body, [])}` : ''}`;
  const verdict = classifyHttpStatus(res.status, label, { redirectNote: ': redirect not followed', retryAfterMs: retryAfterMs(res.headers) });
  return res.status === 400 && body?.status === 'INVALID' ? refused(res, body, verdict) : verdict;
}

/**
 * One log per event: each INVALID one fails with its own messages. In a 2xx the others were
 * taken; a 400 refused the request, so the others go again without the invalid ones.
 */
function classifyLogs(res: PlatformResponse, body: Json | null, logs: Json[]): Classification {
  const invalid = logs.flatMap((log, i) => (log.status === 'INVALID' ? [{ log, index: Number.isInteger(log.event) ? (log.event as number) : i }] : []));
  const events = invalid.map(({ log, index }) => ({ index, outcome: 'permanent' as const, message: `HTTP ${res.status}, Snap found the event invalid${why(body, [log])}` }));
  const reasons = why(body, invalid.map((x) => x.log));
  if (!isSuccessStatus(res.status)) {
    const refusal: Classification = { outcome: 'permanent', message: `HTTP ${res.status}, Snap error${reasons}` };
    return events.length > 0 ? { ...refusal, events, others: 'resend' } : { ...refusal, others: 'split' };
  }
  const status = typeof body?.status === 'string' ? body.status : 'accepted';
  if (events.length === 0) return { outcome: 'success', message: status };
  if (invalid.length === logs.length) return { outcome: 'permanent', message: `HTTP ${res.status}, Snap found the events invalid${reasons}`, events };
  return { outcome: 'success', message: `${status}; ${invalid.length} of ${logs.length} events invalid${reasons}`, events };
}

/**
 * A refusal of the whole request: the event it names (`event`, its index) fails with Snap's
 * reason and the others go again without it; naming none, the request is split.
 */
function refused(res: PlatformResponse, body: Json, verdict: Classification): Classification {
  if (Number.isInteger(body.event)) {
    const message = `HTTP ${res.status}, Snap found the event invalid${why(body, [])}`;
    return { ...verdict, events: [{ index: body.event as number, outcome: 'permanent', message }], others: 'resend' };
  }
  return { ...verdict, others: 'split' };
}

/** `: <first error message or reason>`, at most 300 characters; empty when Snap gave none. */
function why(body: Json | null, logs: Json[]): string {
  const messages = [...logs, body].flatMap((o) => {
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
