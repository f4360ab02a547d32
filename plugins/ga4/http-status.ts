// Status-only classification shared by the GA4 plugin's non-2xx replies: 408, 429 and 5xx
// are worth retrying (with Retry-After when given); redirects are never followed.
import type { Classification, PlatformResponse } from '../../src/destinations/types.ts';

export function classifyHttpStatus(res: PlatformResponse, platform: string): Classification {
  const { status } = res;
  if (status === 408 || status === 429 || status >= 500) {
    const retryAfterMs = retryAfterHeaderMs(res.headers);
    const message = `${platform} answered HTTP ${status}`;
    return retryAfterMs === undefined ? { outcome: 'retryable', message } : { outcome: 'retryable', message, retryAfterMs };
  }
  if (status >= 300 && status < 400) {
    return { outcome: 'permanent', message: `${platform} answered HTTP ${status} (redirects are not followed; check the endpoint)` };
  }
  return { outcome: 'permanent', message: `${platform} answered HTTP ${status}` };
}

/** `Retry-After: <seconds>` in ms; an HTTP-date or garbage gives undefined (the default backoff applies). */
export function retryAfterHeaderMs(headers: Record<string, string>): number | undefined {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === 'retry-after');
  const raw = key === undefined ? undefined : headers[key]?.trim();
  if (raw === undefined || !/^\d+(\.\d+)?$/.test(raw)) return undefined;
  return Math.round(Number(raw) * 1000);
}
