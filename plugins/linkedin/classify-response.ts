// LinkedIn's reply → success / retryable / permanent. 429 and 5xx (and 408) are retried,
// with Retry-After when given; other 4xx are final. A 2xx BATCH_CREATE answer carries one
// status per element: every element failed is final (or retried when each failure is
// retryable); some failed is a success that names how many and LinkedIn's first message.
import { classifyHttpStatus, isRetryableStatus, isSuccessStatus } from '../../src/destinations/http-status.ts';
import { retryAfterMs } from '../../src/destinations/retry-after.ts';
import type { Classification, PlatformResponse } from '../../src/destinations/types.ts';

interface ElementResult { status?: unknown; error?: { message?: unknown; status?: unknown } }

export function classifyResponse(res: PlatformResponse): Classification {
  const body = parse(res.body);
  if (isSuccessStatus(res.status)) {
    const results: ElementResult[] = Array.isArray(body?.elements) ? body.elements : [];
    const failed = results.filter((e) => typeof elementStatus(e) === 'number' && !isSuccessStatus(elementStatus(e)!));
    if (failed.length === 0) return { outcome: 'success', message: results.length > 0 ? `${results.length} conversion events created` : 'accepted' };
    const first = failed.map((e) => e.error?.message).find((m) => typeof m === 'string');
    const why = `${failed.length} of ${results.length} failed (first: status ${elementStatus(failed[0])}${typeof first === 'string' ? `, ${first.slice(0, 300)}` : ''})`;
    if (failed.length < results.length) return { outcome: 'success', message: `HTTP ${res.status}, ${why}` };
    const message = `HTTP ${res.status}, every conversion event failed: ${why}`;
    return failed.every((e) => isRetryableStatus(elementStatus(e)!))
      ? { outcome: 'retryable', message, ...afterOf(res) }
      : { outcome: 'permanent', message };
  }
  const text = typeof body?.message === 'string' ? `: ${body.message.slice(0, 300)}` : '';
  const code = typeof body?.serviceErrorCode === 'number' ? ` serviceErrorCode ${body.serviceErrorCode}` : '';
  const hint = res.status === 401 ? ' (the access token is invalid or expired: update access_token)' : '';
  const label = `HTTP ${res.status}${text || code ? `, LinkedIn error${code}${text}` : ''}${hint}`;
  return classifyHttpStatus(res.status, label, { redirectNote: ': redirect not followed', retryAfterMs: retryAfterMs(res.headers) });
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
