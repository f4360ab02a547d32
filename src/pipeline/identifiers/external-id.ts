// External id (the caller's customer id). Meta and TikTok get it hashed; GA4 gets it as
// plain `user_id`, which must not contain PII, so an id that is an e-mail is refused there.
// Meta's own SDK and pixel lower-case it before hashing, so Meta gets it lower-cased too:
// the same customer id then hashes alike from the browser and from here.
import { nonEmpty } from './text.ts';
import type { Platform } from './types.ts';

/**
 * Trimmed; lower-cased for Meta, case kept elsewhere (ids are often case-sensitive). For
 * Google, null when it holds an `@`.
 * @example normaliseExternalId(' C-1042 ', 'meta')   // 'c-1042'
 * @example normaliseExternalId(' C-1042 ', 'tiktok') // 'C-1042'
 */
export function normaliseExternalId(raw: string, platform: Platform): string | null {
  const s = raw.normalize('NFC').trim();
  if (platform === 'google' && s.includes('@')) return null;
  return nonEmpty(platform === 'meta' ? s.toLowerCase() : s);
}
