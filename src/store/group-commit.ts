// The group-commit mechanism shared by intake events and delivery attempts: items that
// arrive in the same event-loop turn are committed together, each caller's promise
// settling with its own result once that commit is done. Pipelined: while a batch
// commits, later items queue, and everything queued goes out as the next batch. The queue
// is bounded: past `maxQueue` waiting items a submit is refused at once (QueueFullError),
// so an overloaded or stuck store answers 503 now rather than after a long timeout.
// A group submitted with submitMany is never split: its items share one transaction,
// so they are all stored or none is. With `lingerMs`, a batch waits that long for more
// items (or until it is full) before it commits: fewer, larger transactions for callers
// that do not wait on the commit to answer anyone.

export class QueueFullError extends Error {
  override name = 'QueueFullError';
}

export interface GroupCommit<T, R> {
  /** Resolves with this item's result once its batch is committed; rejects when the commit failed. */
  submit(item: T): Promise<R>;
  /** Commits `items` in one transaction (possibly with other callers' items); result `i` belongs to item `i`. */
  submitMany(items: readonly T[]): Promise<R[]>;
  /** Resolves when nothing is waiting to be committed. */
  drain(): Promise<void>;
  /** Whether as many items wait as the queue holds (a submit now would be refused). */
  full(): boolean;
}

interface Waiting<T, R> {
  items: readonly T[];
  resolve: (r: R[]) => void;
  reject: (e: unknown) => void;
}

/**
 * @param commit writes a batch in one transaction; result `i` belongs to item `i`.
 * @param opts.maxBatch items per transaction, at most: a larger group still goes out whole, alone.
 * @example
 * const writer = createGroupCommit((rows) => store.append(rows), { maxBatch: 512 });
 * const status = await writer.submit(row);
 */
export function createGroupCommit<T, R>(
  commit: (items: T[]) => Promise<R[]>,
  opts: { maxBatch: number; onBatch?: (n: number) => void; maxQueue?: number; concurrency?: number; lingerMs?: number },
): GroupCommit<T, R> {
  const maxQueue = opts.maxQueue ?? Infinity;
  // Transactions in flight at once: 1 for SQLite (one writer); a server database such as
  // PostgreSQL commits several in parallel, each waiting for its own round trips and fsync.
  const concurrency = Math.max(1, opts.concurrency ?? 1);
  let queue: Waiting<T, R>[] = [];
  let queued = 0;
  let scheduled = false;
  /** The linger timer of a scheduled committer (undefined: it runs on the next turn). */
  let lingering: NodeJS.Timeout | undefined;
  let active = 0;
  const idle: (() => void)[] = [];

  /** The next transaction's groups: whole groups while they fit in maxBatch, and always at least one. */
  function take(): Waiting<T, R>[] {
    let n = 0;
    let count = 0;
    while (n < queue.length && (n === 0 || count + queue[n].items.length <= opts.maxBatch)) count += queue[n++].items.length;
    queued -= count;
    return queue.splice(0, n);
  }

  async function flush(): Promise<void> {
    scheduled = false;
    clearTimeout(lingering);
    lingering = undefined;
    active++;
    try {
      while (queue.length > 0) {
        const groups = take();
        const items = groups.length === 1 ? [...groups[0].items] : groups.flatMap((g) => g.items);
        try {
          const results = await commit(items);
          opts.onBatch?.(items.length);
          let at = 0;
          for (const g of groups) {
            g.resolve(results.slice(at, at + g.items.length));
            at += g.items.length;
          }
        } catch (e) {
          for (const g of groups) g.reject(e);
        }
      }
    } finally {
      active--;
      if (active === 0 && !scheduled && queue.length === 0) for (const f of idle.splice(0)) f();
    }
  }

  /** Starts a committer on the next turn (so the whole turn's items join it) if one may start. */
  function kick(): void {
    if (active >= concurrency) return;
    const linger = (opts.lingerMs ?? 0) > 0 && queued < opts.maxBatch;
    if (scheduled) {
      if (lingering === undefined || linger) return;
      clearTimeout(lingering); // the batch is full: no reason to wait longer
      lingering = undefined;
      setImmediate(flush);
      return;
    }
    scheduled = true;
    if (linger) lingering = setTimeout(flush, opts.lingerMs);
    else setImmediate(flush);
  }

  /** Past the bound a group is refused; one larger than the bound is taken only into an empty queue. */
  const refuses = (n: number) => queued > 0 && queued + n > maxQueue;

  function submitMany(items: readonly T[]): Promise<R[]> {
    if (items.length === 0) return Promise.resolve([]);
    if (refuses(items.length)) {
      return Promise.reject(new QueueFullError(`${queued} items are already waiting for a commit`));
    }
    return new Promise<R[]>((resolve, reject) => {
      queue.push({ items, resolve, reject });
      queued += items.length;
      // setImmediate runs after this turn's I/O callbacks: every item of the turn joins
      // the batch, and none waits on a timer. A committer already running picks it up too.
      kick();
    });
  }

  return {
    submitMany,
    submit: (item) => submitMany([item]).then((r) => r[0]),
    full: () => refuses(1),
    drain() {
      if (!scheduled && active === 0 && queue.length === 0) return Promise.resolve();
      return new Promise<void>((r) => idle.push(r));
    },
  };
}
