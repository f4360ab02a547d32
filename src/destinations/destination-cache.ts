// An account's destinations, cached for one second per account: the intake path reads
// them on every test request, and an operator's change still shows within 2 s.
import type { DestinationRecord, DestinationStore } from '../store/types.ts';

export interface DestinationCache {
  list(scriptId: string): Promise<DestinationRecord[]>;
}

export function createDestinationCache(store: DestinationStore, opts: { ttlMs?: number; now?: () => number } = {}): DestinationCache {
  const ttl = opts.ttlMs ?? 1000;
  const now = opts.now ?? Date.now;
  const cache = new Map<string, { at: number; list: Promise<DestinationRecord[]> }>();
  return {
    list(scriptId) {
      const hit = cache.get(scriptId);
      if (hit && now() - hit.at < ttl) return hit.list;
      const list = store.list(scriptId);
      if (cache.size > 10_000) cache.clear();
      cache.set(scriptId, { at: now(), list });
      list.catch(() => cache.delete(scriptId));
      return list;
    },
  };
}
