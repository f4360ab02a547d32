// The receiver's reply → success / retryable / permanent, as Standard Webhooks senders do:
// 2xx accepted; 410 endpoint gone (the lane pauses the destination) and 3xx (redirects are
// not followed) final; else retry.
// Deliberately not classifyHttpStatus (the platform APIs' rule): here a 4xx other than 410
// is retried too, as the Standard Webhooks retry guidance says.
import { isRedirectStatus, isSuccessStatus, retryable, retryAfterMs, type Classification, type PlatformResponse } from 'tracklane/sdk';

export function classifyResponse(res: PlatformResponse): Classification {
  const { status } = res;
  if (isSuccessStatus(status)) return { outcome: 'success', message: `HTTP ${status}` };
  if (status === 410) {
    return { outcome: 'permanent', message: 'HTTP 410 Gone: the receiver says this endpoint no longer exists; the destination is paused until resumed' };
  }
  if (isRedirectStatus(status)) {
    return { outcome: 'permanent', message: `HTTP ${status}: redirects are not followed; point the destination at the final URL` };
  }
  return retryable(`HTTP ${status}`, retryAfterMs(res.headers));
}
