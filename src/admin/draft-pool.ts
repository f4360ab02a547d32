// The threads the admin API's rules previews and replays-through-draft run in (piscina over
// draft-worker.ts): off the HTTP thread, each within a time limit. The task stops itself
// between events past the limit; a task still running well after it (or stuck in plugin
// code) is aborted, which ends its thread. A full queue refuses at once rather than waiting.
import { Piscina } from 'piscina';
import { siblingModule } from '../build-state.cjs';
import type { DraftResult, DraftRunner } from '../pipeline/draft-preview.ts';
import type { DraftWorkerTask } from './draft-worker.ts';
import { workerExecArgv, workerResourceLimits } from '../workers/worker-options.ts';

/** Time a preview or replay may spend planning events, by default. */
export const DRAFT_TIME_LIMIT_MS = 10_000;
/** On top of the limit before the thread is ended: starting a thread, loading the plugins, the event in hand. */
const ABORT_GRACE_MS = 20_000;
/** Tasks waiting for a thread at most; one more is refused (DraftPoolBusy). */
const MAX_QUEUED = 4;

export interface DraftPoolOptions {
  /** PLUGINS_DIR: each thread loads the plugins from it. */
  pluginsDir: string;
  /** Default DRAFT_TIME_LIMIT_MS. */
  timeLimitMs?: number;
  /** Default 1: one replay (they run one at a time) or preview at once, the rest queued. */
  threads?: number;
}

/** The queue is full. */
export class DraftPoolBusy extends Error {
  override name = 'DraftPoolBusy';
}

/** The task ran far past its time limit and its thread was ended. */
export class DraftStopped extends Error {
  override name = 'DraftStopped';
}

// The compiled module when this one is (npm start from dist/), else the source through tsx.
const WORKER_FILE = siblingModule(import.meta.url, 'draft-worker');

export function createDraftPool(opts: DraftPoolOptions): DraftRunner {
  const timeLimitMs = opts.timeLimitMs ?? DRAFT_TIME_LIMIT_MS;
  let piscina: Piscina | undefined;
  // Threads start on the first preview; one stays warm a while after (a worker with tsx
  // takes a second or so to start and load the plugins).
  const pool = () => (piscina ??= new Piscina({
    filename: WORKER_FILE,
    minThreads: 0,
    maxThreads: opts.threads ?? 1,
    maxQueue: MAX_QUEUED,
    idleTimeout: 60_000,
    execArgv: workerExecArgv(WORKER_FILE),
    resourceLimits: workerResourceLimits(),
  }));
  return {
    timeLimitMs,
    async run(request) {
      const task: DraftWorkerTask = { ...request, timeLimitMs, pluginsDir: opts.pluginsDir };
      try {
        return (await pool().run(task, { signal: AbortSignal.timeout(timeLimitMs + ABORT_GRACE_MS) })) as DraftResult;
      } catch (err) {
        const e = err as Error;
        if (e.name === 'AbortError' || e.name === 'TimeoutError') throw new DraftStopped(`ran past its time limit of ${timeLimitMs} ms and was stopped`);
        if (/queue is at limit/i.test(e.message)) throw new DraftPoolBusy(`${MAX_QUEUED} previews are already waiting`);
        throw err;
      }
    },
    async close() {
      await piscina?.destroy();
      piscina = undefined;
    },
  };
}
