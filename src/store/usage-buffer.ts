// Endpoint version uses summed in memory and written together: one upsert per (account,
// endpoint, version, env) a second instead of a write per request. A failed write keeps
// its counts for the next one; a crash loses at most the last second's.
import type { VersionUsage, VersionUse } from './custom-record-contract.ts';

export interface UsageBuffer {
  count(use: VersionUse): void;
  /** Writes what is counted so far; resolves after the write. */
  flush(): Promise<void>;
}

export function createUsageBuffer(write: (rows: VersionUsage[]) => Promise<void>, opts: { flushMs?: number; onError?: (err: unknown) => void } = {}): UsageBuffer {
  let pending = new Map<string, VersionUsage>();
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();

  function add(row: VersionUsage): void {
    const key = JSON.stringify([row.scriptId, row.customer, row.endpoint, row.version, row.env]);
    const had = pending.get(key);
    if (!had) pending.set(key, { ...row });
    else {
      had.uses += row.uses;
      had.firstUsedAt = Math.min(had.firstUsedAt, row.firstUsedAt);
      had.lastUsedAt = Math.max(had.lastUsedAt, row.lastUsedAt);
    }
  }

  function flush(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    writing = writing.then(async () => {
      if (pending.size === 0) return;
      const rows = [...pending.values()];
      pending = new Map();
      try {
        await write(rows);
      } catch (err) {
        for (const r of rows) add(r);
        opts.onError?.(err);
      }
    });
    return writing;
  }

  return {
    count(use) {
      const { at, ...key } = use;
      add({ ...key, uses: 1, firstUsedAt: at, lastUsedAt: at });
      timer ??= setTimeout(() => void flush(), opts.flushMs ?? 1_000).unref();
    },
    flush,
  };
}
