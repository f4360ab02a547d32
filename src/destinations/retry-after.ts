// The wait a platform asks for before a retry: the `Retry-After` header (RFC 9110 §10.2.3),
// read the same way by every plugin, and the retryable verdict that carries it.
// An HTTP-date form is ignored: classification is pure and has no clock.
import type { Classification } from './types.ts';

export interface RetryAfterOptions {
  /**
   * Also accept fractional seconds (`1.5` → 1500 ms, rounded). RFC 9110 allows whole
   * seconds only; the Google plugins have always taken fractions too, so they opt in.
   */
  fractions?: boolean;
}

/**
 * `Retry-After: <seconds>` (header name in any case) → milliseconds; anything else,
 * including an HTTP-date, gives undefined so the default backoff applies.
 *
 * @example
 * retryAfterMs({ 'Retry-After': '30' });                    // → 30_000
 * retryAfterMs({ 'retry-after': '1.5' });                   // → undefined
 * retryAfterMs({ 'retry-after': '1.5' }, { fractions: true }); // → 1500
 */
export function retryAfterMs(headers: Record<string, string>, options: RetryAfterOptions = {}): number | undefined {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === 'retry-after');
  const raw = key === undefined ? undefined : headers[key]?.trim();
  if (raw === undefined) return undefined;
  const pattern = options.fractions ? /^\d+(\.\d+)?$/ : /^\d+$/;
  return pattern.test(raw) ? Math.round(Number(raw) * 1000) : undefined;
}

/** A retryable verdict, with `retryAfterMs` only when a wait is known (never `undefined`-valued). */
export function retryable(message: string, waitMs: number | undefined): Classification {
  return waitMs === undefined ? { outcome: 'retryable', message } : { outcome: 'retryable', message, retryAfterMs: waitMs };
}
