// E-mail normalisation: NFC, trimmed, lower-cased, shape-checked; a destination's form may
// also remove inner spaces and drop the dots of a gmail.com / googlemail.com local part
// (the domain itself is left as written).
import type { EmailForm } from './forms.ts';

const GMAIL_DOMAINS = new Set(['gmail.com', 'googlemail.com']);
const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/u;

/**
 * Normalises an e-mail address, or returns null when it is not an address.
 * The `+tag` is always kept (the GA4 and Ads pages say dots only — a CONFLICT in the reference).
 *
 * @example normaliseEmail(' John.Doe@GMail.com ', { removeSpaces: true, dropGmailDots: true }) // 'johndoe@gmail.com'
 * @example normaliseEmail(' John.Doe@GMail.com ')                                               // 'john.doe@gmail.com'
 */
export function normaliseEmail(raw: string, form: EmailForm = {}): string | null {
  let s = raw.normalize('NFC').trim().toLowerCase();
  if (form.removeSpaces === true) s = s.replace(/\s+/gu, '');
  if (!EMAIL_SHAPE.test(s)) return null;
  const at = s.lastIndexOf('@');
  const domain = s.slice(at + 1);
  if (form.dropGmailDots === true && GMAIL_DOMAINS.has(domain)) {
    return `${s.slice(0, at).replaceAll('.', '')}@${domain}`;
  }
  return s;
}
