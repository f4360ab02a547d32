// Worker entry of the hash pool: named, pure handlers selected with
// `piscina.run(input, { name })`. Plain data in and out; the main thread imports the
// same functions for its inline fast path, so both paths give identical results.
// On Node 20 this module and its imports are loaded through tsx's require hook (see
// worker-options.ts), so they must stay free of top-level await.
import { isMainThread, resourceLimits, threadId, type ResourceLimits } from 'node:worker_threads';
import { createNormalMemo, hashIdentifiers, type HashedIdentifiers, type IdentifierSpec, type IdentifierUser, type NormalMemo } from '../identifiers/index.ts';

/** One user to hash for one destination (its identifier spec, plain data), with the account's default country. */
export interface HashItem {
  user: IdentifierUser | null | undefined;
  spec: IdentifierSpec;
  defaultCountry?: string;
}

/**
 * Hashes every item; result `i` belongs to item `i`. `memo` (inline only): the caller's, so
 * what it hashes later for the same events (their rules' `user`) is not hashed again.
 */
export function hashBatch(items: readonly HashItem[], memo: NormalMemo = createNormalMemo()): HashedIdentifiers[] {
  // The same user is usually hashed for several destinations: each normal form once.
  return items.map((item) => hashIdentifiers(item.user, item.spec, { defaultCountry: item.defaultCountry, memo }));
}

/** Which thread ran the task, and its heap limits; lets tests and health checks see that the pool is really used. */
export function threadInfo(): { threadId: number; isMainThread: boolean; resourceLimits: ResourceLimits } {
  return { threadId, isMainThread, resourceLimits };
}
