// External id (the caller's customer id). Meta and TikTok get it hashed; GA4 gets it as
// plain `user_id`, which must not contain PII, so an id that is an e-mail is refused there.
import { nonEmpty } from './text.ts';
import type { Platform } from './types.ts';

/**
 * Trimmed, case kept (ids are often case-sensitive). For Google, null when it holds an `@`.
 * @example normaliseExternalId(' C-1042 ', 'meta') // 'C-1042'
 */
export function normaliseExternalId(raw: string, platform: Platform): string | null {
  const s = raw.normalize('NFC').trim();
  if (platform === 'google' && s.includes('@')) return null;
  return nonEmpty(s);
}
