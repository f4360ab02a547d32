// A GA4 client_id for events without a `_ga` cookie: derived from the user so that one
// customer keeps one id across events, in the `<digits>.<digits>` form GA4 requires.
import { createHmac } from 'node:crypto';

/**
 * HMAC-SHA256(salt, key) split into two positive integers: a 32-bit "random" part and a
 * ten-digit part in the range GA uses for its first-seen timestamp. Keyed with a salt
 * (e.g. the account id) so the id cannot be matched against hashes of guessed e-mails.
 *
 * @example deriveClientId('customer-42', 'acct-1') // e.g. '2918346117.1437025830'
 */
export function deriveClientId(key: string, salt: string): string {
  const digest = createHmac('sha256', salt).update(key, 'utf8').digest();
  const random = digest.readUInt32BE(0) || 1;
  const firstSeen = 1_000_000_000 + (digest.readUInt32BE(4) % 1_000_000_000);
  return `${random}.${firstSeen}`;
}
