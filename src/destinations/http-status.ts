// What an HTTP status alone says about a delivery, once the plugin has read what the body says.
// Platform APIs share one rule (408, 429, 5xx retry; 3xx and other 4xx are final); the webhook
// follows Standard Webhooks instead (only 3xx and 410 final) and uses just the predicates.
import { retryable } from './retry-after.ts';
import type { Classification } from './types.ts';

export function isSuccessStatus(status: number): boolean {
  return status >= 200 && status < 300;
}

/** Redirects are never followed: the operator must point the destination at the final URL. */
export function isRedirectStatus(status: number): boolean {
  return status >= 300 && status < 400;
}

/** Timeout, rate limit or a server-side failure: the same request may succeed later. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

export interface HttpStatusOptions {
  /** Appended to the label on a 3xx, in the plugin's own wording. */
  redirectNote: string;
  /** The wait the reply asked for, used when the status is retryable. */
  retryAfterMs?: number;
}

/**
 * The verdict on a non-2xx reply of a platform API whose body decided nothing: 408, 429 and
 * 5xx retryable, 3xx permanent with `redirectNote`, any other status permanent.
 *
 * @example
 * classifyHttpStatus(302, 'GA4 answered HTTP 302', { redirectNote: ' (redirects are not followed)' });
 * // → { outcome: 'permanent', message: 'GA4 answered HTTP 302 (redirects are not followed)' }
 */
export function classifyHttpStatus(status: number, label: string, options: HttpStatusOptions): Classification {
  if (isRetryableStatus(status)) return retryable(label, options.retryAfterMs);
  if (isRedirectStatus(status)) return { outcome: 'permanent', message: `${label}${options.redirectNote}` };
  return { outcome: 'permanent', message: label };
}
