// E-mail normalisation. Google alone drops the dots of a
// gmail.com / googlemail.com local part; the domain itself is left as written.
import type { Platform } from './types.ts';

const GOOGLE_DOT_DOMAINS = new Set(['gmail.com', 'googlemail.com']);
const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/u;

/**
 * Normalises an e-mail address for one platform, or returns null when it is not an address.
 * - all: NFC, trim, lowercase
 * - google: also remove every space, and dots in the local part of gmail.com / googlemail.com
 *   (the `+tag` is kept: the GA4 and Ads pages say dots only — a CONFLICT in the reference)
 *
 * @example normaliseEmail(' John.Doe@GMail.com ', 'google') // 'johndoe@gmail.com'
 * @example normaliseEmail(' John.Doe@GMail.com ', 'meta')   // 'john.doe@gmail.com'
 */
export function normaliseEmail(raw: string, platform: Platform): string | null {
  let s = raw.normalize('NFC').trim().toLowerCase();
  if (platform === 'google') s = s.replace(/\s+/gu, '');
  if (!EMAIL_SHAPE.test(s)) return null;
  const at = s.lastIndexOf('@');
  const domain = s.slice(at + 1);
  if (platform === 'google' && GOOGLE_DOT_DOMAINS.has(domain)) {
    return `${s.slice(0, at).replaceAll('.', '')}@${domain}`;
  }
  return s;
}
