// External id (the caller's customer id): trimmed, case kept unless the destination's form
// lower-cases it (Meta's SDK and pixel do, so the same id hashes alike from the browser and
// from here). Where it goes in plain text it must not carry PII: the form then refuses an
// id that holds an `@`.
import type { ExternalIdForm } from './forms.ts';
import { nonEmpty } from './text.ts';

/**
 * @example normaliseExternalId(' C-1042 ', { lowerCase: true }) // 'c-1042'
 * @example normaliseExternalId(' C-1042 ')                      // 'C-1042'
 * @example normaliseExternalId('a@b.com', { refuseEmail: true }) // null
 */
export function normaliseExternalId(raw: string, form: ExternalIdForm = {}): string | null {
  const s = raw.normalize('NFC').trim();
  if (form.refuseEmail === true && s.includes('@')) return null;
  return nonEmpty(form.lowerCase === true ? s.toLowerCase() : s);
}
