// Standard Webhooks signing (standardwebhooks.com): HMAC-SHA256 over `id.timestamp.body`
// with the base64-decoded part of the `whsec_` secret, sent as `v1,<base64>`.
import { createHmac } from 'node:crypto';

/**
 * @example
 * signature('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')
 * // → 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE='
 */
export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = keyOf(secret);
  // The signed content in two parts: joined first, the body would be copied once more
  // (and the request's own body, a rope until then, flattened again when it is sent).
  const digest = createHmac('sha256', key).update(`${id}.${timestamp}.`, 'utf8').update(body, 'utf8').digest('base64');
  return `v1,${digest}`;
}

/** Secrets (one or two per destination) → their decoded keys, decoded once, not per request. */
const keys = new Map<string, Buffer>();

function keyOf(secret: string): Buffer {
  let key = keys.get(secret);
  if (key === undefined) {
    // Bounded: secrets of removed or rotated destinations do not stay for the process's life.
    if (keys.size >= 1_000) keys.clear();
    keys.set(secret, (key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')));
  }
  return key;
}
