// The receiver's reply → success / retryable / permanent, as Standard Webhooks senders do:
// 2xx accepted; 410 endpoint gone and 3xx (redirects are not followed) final; else retry.
import type { Classification, PlatformResponse } from '../../src/destinations/types.ts';

export function classifyResponse(res: PlatformResponse): Classification {
  const { status } = res;
  if (status >= 200 && status < 300) return { outcome: 'success', message: `HTTP ${status}` };
  if (status === 410) {
    return { outcome: 'permanent', message: 'HTTP 410 Gone: the receiver says this endpoint no longer exists; disable or update the destination' };
  }
  if (status >= 300 && status < 400) {
    return { outcome: 'permanent', message: `HTTP ${status}: redirects are not followed; point the destination at the final URL` };
  }
  const after = retryAfterMs(res.headers);
  const message = `HTTP ${status}`;
  return after === undefined ? { outcome: 'retryable', message } : { outcome: 'retryable', message, retryAfterMs: after };
}

/** Retry-After in delta-seconds; an HTTP date is ignored (no clock here). */
function retryAfterMs(headers: Record<string, string>): number | undefined {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === 'retry-after');
  const raw = key === undefined ? undefined : headers[key]?.trim();
  if (raw === undefined || !/^\d+$/.test(raw)) return undefined;
  return Number(raw) * 1000;
}
