// The group-commit mechanism shared by intake events and delivery attempts: items that
// arrive in the same event-loop turn are committed together, each caller's promise
// settling with its own result once that commit is done. Pipelined: while a batch
// commits, later items queue, and everything queued goes out as the next batch. The queue
// is bounded: past `maxQueue` waiting items a submit is refused at once (QueueFullError),
// so an overloaded or stuck store answers 503 now rather than after a long timeout.

export class QueueFullError extends Error {
  override name = 'QueueFullError';
}

export interface GroupCommit<T, R> {
  /** Resolves with this item's result once its batch is committed; rejects when the commit failed. */
  submit(item: T): Promise<R>;
  /** Resolves when nothing is waiting to be committed. */
  drain(): Promise<void>;
}

/**
 * @param commit writes a batch in one transaction; result `i` belongs to item `i`.
 * @example
 * const writer = createGroupCommit((rows) => store.append(rows), { maxBatch: 512 });
 * const status = await writer.submit(row);
 */
export function createGroupCommit<T, R>(
  commit: (items: T[]) => Promise<R[]>,
  opts: { maxBatch: number; onBatch?: (n: number) => void; maxQueue?: number },
): GroupCommit<T, R> {
  const maxQueue = opts.maxQueue ?? Infinity;
  let queue: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  let scheduled = false;
  let running = false;
  const idle: (() => void)[] = [];

  async function flush(): Promise<void> {
    scheduled = false;
    running = true;
    try {
      while (queue.length > 0) {
        const batch = queue.splice(0, opts.maxBatch);
        try {
          const results = await commit(batch.map((w) => w.item));
          opts.onBatch?.(batch.length);
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
    submit(item) {
      if (queue.length >= maxQueue) {
        return Promise.reject(new QueueFullError(`${queue.length} items are already waiting for a commit`));
      }
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        // setImmediate runs after this turn's I/O callbacks: every item of the turn joins
        // the batch, and none waits on a timer.
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
