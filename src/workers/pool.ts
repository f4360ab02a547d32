// The hashing pool: piscina over hash-worker.ts, with an inline fast path because small
// batches cost more to post to a thread (clone + wake-up) than to hash on the spot, and,
// in the server, only while a core is idle to run the pool's thread (see idle-cores.ts).
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { siblingModule } from '../build-state.cjs';
import { sourceFields } from '../identifiers/spec.ts';
import type { HashedIdentifiers, NormalMemo } from '../identifiers/hash-identifiers.ts';
import type { IdentifierUser } from '../identifiers/types.ts';
import * as handlers from './hash-worker.ts';
import type { HashItem } from './hash-worker.ts';
import { workerExecArgv, workerResourceLimits } from './worker-options.ts';
import { whenCoresIdle } from './idle-cores.ts';

type Handlers = typeof handlers;
export type HashHandlerName = keyof Handlers;

export interface HashPoolOptions {
  /** Worker threads, started at once and kept. Default: `os.availableParallelism()`. */
  threads?: number;
  /** Batches with fewer items than this run inline on the calling thread. Default 64; 0 sends everything to the pool. */
  inlineBelow?: number;
  /**
   * Asked for each batch of at least `inlineBelow` items: whether the pool may take it now
   * (false: it is hashed inline). Default: always. The server passes `whenCoresIdle(1)`.
   */
  offloadWhen?: () => boolean;
  /** Largest number of items per pool task; a batch is split evenly over the threads up to this. Default 100. */
  itemsPerTask?: number;
  /** Node flags for the workers. Default: what a worker takes of this thread's flags, plus the tsx loader (see worker-options.ts). */
  execArgv?: string[];
  /**
   * Called when the pool fails a batch (its threads cannot start, or a task failed): the
   * batch is then hashed inline, with identical results, and the pool is left alone for
   * POOL_RETRY_MS, so delivery never stalls on the pool. Default: nothing.
   */
  onPoolError?: (err: unknown, retryInMs: number) => void;
  /** Tests: the clock for the retry pause. */
  now?: () => number;
}

/** After a pool failure, batches are hashed inline for this long before the pool is tried again. */
export const POOL_RETRY_MS = 60_000;

export interface HashPool {
  /**
   * Hashes a batch; result `i` belongs to item `i`, whichever path ran it. `memo`: filled
   * when the batch is hashed inline, so the caller can hash the same values again for free.
   */
  hashBatch(items: readonly HashItem[], memo?: NormalMemo): Promise<HashedIdentifiers[]>;
  /** Runs one named handler in a worker, bypassing the inline path. */
  run<N extends HashHandlerName>(name: N, input: Parameters<Handlers[N]>[0]): Promise<ReturnType<Handlers[N]>>;
  readonly threads: number;
  /** Waits for running tasks, then stops the workers. Later calls are refused. */
  close(): Promise<void>;
}

// The compiled module when this one is (npm start from dist/), else the source through tsx.
const WORKER_FILE = siblingModule(import.meta.url, 'hash-worker');

/**
 * @example
 * const pool = createHashPool({ threads: 2 });
 * const [meta] = await pool.hashBatch([{ user: { email: 'a@b.com' }, spec: metaCapi.identifiers, defaultCountry: 'RO' }]);
 * await pool.close();
 */
export function createHashPool(opts: HashPoolOptions = {}): HashPool {
  const threads = Math.max(1, opts.threads ?? availableParallelism());
  const inlineBelow = opts.inlineBelow ?? 64;
  const offloadWhen = opts.offloadWhen ?? (() => true);
  const itemsPerTask = Math.max(1, opts.itemsPerTask ?? 100);
  // Threads start on the first batch that needs them: a process that only ever hashes
  // small batches (a test server, the CLI) never pays for them.
  let piscina: Piscina | undefined;
  const pool = (): Piscina =>
    (piscina ??= new Piscina({
      filename: WORKER_FILE,
      // A named default: piscina preloads it at start-up, and the module has no `default` export.
      name: 'hashBatch',
      minThreads: threads,
      maxThreads: threads,
      execArgv: opts.execArgv ?? workerExecArgv(WORKER_FILE),
      resourceLimits: workerResourceLimits(),
    }));
  let closing: Promise<void> | undefined;
  const now = opts.now ?? Date.now;
  /** While set and in the future, batches skip the pool (it failed). */
  let poolRestsUntil = 0;
  const ensureOpen = () => {
    if (closing !== undefined) throw new Error('hash pool is closed');
  };

  const run: HashPool['run'] = async (name, input) => {
    ensureOpen();
    return pool().run(input, { name });
  };

  return {
    threads,
    run,
    async hashBatch(items, memo) {
      ensureOpen();
      if (items.length < inlineBelow || now() < poolRestsUntil || !offloadWhen()) return handlers.hashBatch(items, memo);
      const size = Math.min(itemsPerTask, Math.ceil(items.length / threads));
      const tasks: Promise<HashedIdentifiers[]>[] = [];
      for (let i = 0; i < items.length; i += size) {
        tasks.push(run('hashBatch', items.slice(i, i + size).map(slim)));
      }
      try {
        return (await Promise.all(tasks)).flat();
      } catch (err) {
        ensureOpen();
        // Hashing is pure: the same function inline gives the same answer. A pool that could
        // not start its threads (refused flags, no memory for a thread) is dropped, so the
        // next try after the pause builds a new one.
        poolRestsUntil = now() + POOL_RETRY_MS;
        const broken = piscina;
        piscina = undefined;
        void broken?.close().catch(() => undefined);
        opts.onPoolError?.(err, POOL_RETRY_MS);
        return handlers.hashBatch(items, memo);
      }
    },
    close() {
      closing ??= piscina ? piscina.close() : Promise.resolve();
      return closing;
    },
  };
}

/** The `onPoolError` of a server: one error line per failure (at most one a minute, as the pool rests in between). */
const hashPoolFailed = (logger: { error(obj: object, msg: string): void }) => (err: unknown, retryInMs: number): void =>
  logger.error({ err, retry_in_ms: retryInMs }, 'hash pool failed; hashing inline until it is tried again');

/**
 * The server process's WORKERS hashing threads, shared out between its two pools: the
 * delivery thread's (fan-out: nearly all hashing) gets the larger half, the HTTP thread's
 * (endpoint 2, `rules preview`) the rest, each at least one. Two full pools of WORKERS each
 * were twice the threads asked for, each thread an isolate of its own (~25 MB of RSS).
 */
export function serverPoolThreads(workers: number): { http: number; delivery: number } {
  return { http: Math.max(1, Math.floor(workers / 2)), delivery: Math.max(1, Math.ceil(workers / 2)) };
}

/**
 * A server pool (HTTP thread, delivery thread; sizes from serverPoolThreads), taking a
 * batch only while at least one core was idle over the last second. Under load every core
 * is busy and the pool would add the cost of moving identifiers between threads to the same
 * cores: the 20,000-event backlog drain used 8 % less CPU hashing inline (docs/performance.md,
 * "Hashing: inline or the pool").
 */
export function createServerHashPool(threads: number, logger: { error(obj: object, msg: string): void }): HashPool {
  return createHashPool({ threads, onPoolError: hashPoolFailed(logger), offloadWhen: whenCoresIdle(1) });
}

/** Only the user fields the item's own table reads cross the thread boundary. */
function slim(item: HashItem): HashItem {
  if (item.user == null) return item;
  const user: IdentifierUser = {};
  const fields = sourceFields(item.spec.table);
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i];
    if (item.user[field] !== undefined) user[field] = item.user[field];
  }
  return { ...item, user };
}
