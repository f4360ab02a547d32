// Group commit: requests that arrive in the same event-loop turn share one
// transaction, and each is acknowledged only after that transaction commits.
// Pipelined: while a batch commits, later writes queue, and everything queued goes out as
// the next batch the moment it resolves. With the store's writer thread (SqliteOptions.
// writerThread) the event loop keeps serving requests during that commit, so the next
// batch gathers while the current one is in insert + fsync; in-process, the commit blocks
// the loop and the next batch gathers in the turns after it.
import type { EventRecord, EventStatus, EventStore } from './types.ts';

interface Waiting {
  row: EventRecord;
  resolve: (status: EventStatus) => void;
  reject: (e: unknown) => void;
}

export interface EventWriter {
  /** Resolves with the stored status once `row` is durably committed; rejects when the commit failed. */
  write(row: EventRecord): Promise<EventStatus>;
  /** Resolves when nothing is waiting to be written. */
  drain(): Promise<void>;
}

export function createEventWriter(store: EventStore, opts: { maxBatch?: number; onBatch?: (n: number) => void } = {}): EventWriter {
  const maxBatch = opts.maxBatch ?? 512;
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
          const statuses = await store.append(batch.map((w) => w.row));
          opts.onBatch?.(batch.length);
          batch.forEach((w, i) => w.resolve(statuses[i]));
        } catch (e) {
          for (const w of batch) w.reject(e);
        }
      }
    } finally {
      running = false;
      for (const f of idle.splice(0)) f();
    }
  }

  function schedule(): void {
    if (scheduled || running) return;
    scheduled = true;
    // setImmediate runs after this turn's I/O callbacks: every request parsed in the
    // same turn joins the batch, and none waits on a timer.
    setImmediate(flush);
  }

  return {
    write(row) {
      return new Promise<EventStatus>((resolve, reject) => {
        queue.push({ row, resolve, reject });
        schedule();
      });
    },
    drain() {
      if (!scheduled && !running && queue.length === 0) return Promise.resolve();
      return new Promise<void>((r) => idle.push(r));
    },
  };
}
