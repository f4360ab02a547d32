// LinkedIn's reply → success / retryable / permanent, per event where LinkedIn says which.
// 429 and 5xx (and 408) are retried, with Retry-After when given; other 4xx are final. A 2xx
// BATCH_CREATE answer carries one status per element: each failed element is settled by its
// own (retried when 429 or 5xx). A 422 naming elements ("Index: N, ERROR :: …") created none:
// the named ones fail with LinkedIn's reason and the others are sent again without them.
import { classifyHttpStatus, isRetryableStatus, isSuccessStatus, retryAfterMs, type Classification, type PlatformResponse } from 'tracklane/sdk';

interface ElementResult { status?: unknown; error?: { message?: unknown; status?: unknown } }

export function classifyResponse(res: PlatformResponse): Classification {
  const body = parse(res.body);
  if (isSuccessStatus(res.status)) return classifyElements(res, body);
  const text = typeof body?.message === 'string' ? `: ${body.message.slice(0, 300)}` : '';
  const code = typeof body?.serviceErrorCode === 'number' ? ` serviceErrorCode ${body.serviceErrorCode}` : '';
  const hint = res.status === 401 ? ' (the access token is invalid or expired: update access_token)' : '';
  const label = `HTTP ${res.status}${text || code ? `, LinkedIn error${code}${text}` : ''}${hint}`;
  const verdict = classifyHttpStatus(res.status, label, { redirectNote: ': redirect not followed', retryAfterMs: retryAfterMs(res.headers) });
  // A BATCH_CREATE refused whole for some elements names each ("Index: N, ERROR :: …"): those
  // fail with LinkedIn's reason, and the others, never created, are sent again without them.
  const named = res.status === 422 && typeof body?.message === 'string' ? indexedErrors(body.message) : [];
  if (named.length === 0) return verdict;
  return { ...verdict, events: named.map(({ index, reason }) => ({ index, outcome: 'permanent', message: `HTTP 422, LinkedIn error: ${reason}` })), others: 'resend' };
}

/** A 2xx BATCH_CREATE answer: one status per element; each failed element is settled by its own. */
function classifyElements(res: PlatformResponse, body: Record<string, any> | null): Classification {
  const results: ElementResult[] = Array.isArray(body?.elements) ? body.elements : [];
  const failedAt = results.flatMap((e, index) => (typeof elementStatus(e) === 'number' && !isSuccessStatus(elementStatus(e)!) ? [index] : []));
  if (failedAt.length === 0) return { outcome: 'success', message: results.length > 0 ? `${results.length} conversion events created` : 'accepted' };
  const failed = failedAt.map((i) => results[i]);
  const events = failedAt.map((index) => {
    const e = results[index];
    const message = `HTTP ${res.status}, element status ${elementStatus(e)}${typeof e.error?.message === 'string' ? `, ${e.error.message.slice(0, 300)}` : ''}`;
    return isRetryableStatus(elementStatus(e)!) ? { index, outcome: 'retryable' as const, message, ...afterOf(res) } : { index, outcome: 'permanent' as const, message };
  });
  const first = failed.map((e) => e.error?.message).find((m) => typeof m === 'string');
  const why = `${failed.length} of ${results.length} failed (first: status ${elementStatus(failed[0])}${typeof first === 'string' ? `, ${first.slice(0, 300)}` : ''})`;
  if (failed.length < results.length) return { outcome: 'success', message: `HTTP ${res.status}, ${why}`, events };
  const message = `HTTP ${res.status}, every conversion event failed: ${why}`;
  const all: Classification = failed.every((e) => isRetryableStatus(elementStatus(e)!))
    ? { outcome: 'retryable', message, ...afterOf(res) }
    : { outcome: 'permanent', message };
  return { ...all, events };
}

/** Every `Index: N, ERROR :: reason` in a 422 message, the reason up to the next index. */
export function indexedErrors(message: string): { index: number; reason: string }[] {
  const out: { index: number; reason: string }[] = [];
  for (const m of message.matchAll(/Index:\s*(\d+),\s*ERROR\s*::\s*([\s\S]*?)(?=\s*Index:\s*\d+,\s*ERROR\s*::|$)/g)) {
    out.push({ index: Number(m[1]), reason: m[2].trim().slice(0, 300) });
  }
  return out;
}

/** An element's HTTP status: its own `status`, else its error's. */
function elementStatus(e: ElementResult | undefined): number | undefined {
  const s = typeof e?.status === 'number' ? e.status : e?.error?.status;
  return typeof s === 'number' ? s : undefined;
}

function afterOf(res: PlatformResponse): { retryAfterMs?: number } {
  const ms = retryAfterMs(res.headers);
  return ms === undefined ? {} : { retryAfterMs: ms };
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
