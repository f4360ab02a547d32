// Group commit for attempt results: every result that arrives in the same event-loop turn
// is written in one transaction, so many concurrent sends cost one commit, not one each.
import type { DeliveryStore, AttemptRecord, RecordResult } from './types.ts';

interface Waiting {
  record: AttemptRecord;
  resolve: (r: RecordResult) => void;
  reject: (e: unknown) => void;
}

export interface AttemptRecorder {
  /** Resolves once the attempt and its delivery updates are committed. */
  record(rec: AttemptRecord): Promise<RecordResult>;
  /** Resolves when nothing is waiting to be written. */
  drain(): Promise<void>;
}

export function createAttemptRecorder(store: Pick<DeliveryStore, 'recordAttempts'>, maxBatch = 256): AttemptRecorder {
  let queue: Waiting[] = [];
  let scheduled = false;
  let running = false;
  const idle: (() => void)[] = [];

  async function flush(): Promise<void> {
    scheduled = false;
    running = true;
    try {
      while (queue.length > 0) {
        const batch = queue.splice(0, maxBatch);
        try {
          const results = await store.recordAttempts(batch.map((w) => w.record));
          batch.forEach((w, i) => w.resolve(results[i]));
        } catch (e) {
          for (const w of batch) w.reject(e);
        }
      }
    } finally {
      running = false;
      for (const f of idle.splice(0)) f();
    }
  }

  return {
    record(record) {
      return new Promise<RecordResult>((resolve, reject) => {
        queue.push({ record, resolve, reject });
        if (!scheduled && !running) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    drain() {
      if (!scheduled && !running && queue.length === 0) return Promise.resolve();
      return new Promise<void>((r) => idle.push(r));
    },
  };
}
