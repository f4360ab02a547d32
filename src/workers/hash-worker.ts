// Worker entry of the hash pool: named, pure handlers selected with
// `piscina.run(input, { name })`. Plain data in and out; the main thread imports the
// same functions for its inline fast path, so both paths give identical results.
// On Node 20 this module and its imports are loaded through tsx's require hook (see
// pool.ts), so they must stay free of top-level await.
import { isMainThread, threadId } from 'node:worker_threads';
import { applyIdentifierTable, IDENTIFIER_TABLES, type HashedIdentifiers, type IdentifierTable, type IdentifierUser, type Platform } from '../pipeline/identifiers/index.ts';

/** One user to hash for one platform, with the account's default country. */
export interface HashItem {
  user: IdentifierUser | null | undefined;
  platform: Platform;
  defaultCountry?: string;
  /** A destination's own table (plain data); the platform's default table otherwise. */
  table?: IdentifierTable;
}

/** Hashes every item; result `i` belongs to item `i`. */
export function hashBatch(items: readonly HashItem[]): HashedIdentifiers[] {
  return items.map((item) =>
    applyIdentifierTable(item.user, item.table ?? IDENTIFIER_TABLES[item.platform], item.platform, { defaultCountry: item.defaultCountry }));
}

/** Which thread ran the task; lets tests and health checks see that the pool is really used. */
export function threadInfo(): { threadId: number; isMainThread: boolean } {
  return { threadId, isMainThread };
}
