// The threads the admin API's rules previews and replays-through-draft run in (piscina over
// draft-worker.ts): off the HTTP thread, each within a time limit. The task stops itself
// between events past the limit; a task still running well after it (or stuck in plugin
// code) is aborted, which ends its thread. Tasks wait here, not in piscina: a full queue is
// refused before anything is submitted (429 upstream), and a task's clock starts when it
// gets a thread, so a preview that waited behind a slow one is never stopped unrun.
import { Piscina } from 'piscina';
import { siblingModule } from '../build-state.cjs';
import type { DraftResult, DraftRunner } from '../pipeline/draft-preview.ts';
import type { DraftWorkerTask } from './draft-worker.ts';
import type { PluginFolders } from '../destinations/load-plugins.ts';
import { workerExecArgv, workerResourceLimits } from '../workers/worker-options.ts';
import { createTaskGate } from '../workers/task-gate.ts';

/** Time a preview or replay may spend planning events, by default. */
export const DRAFT_TIME_LIMIT_MS = 10_000;
/** On top of the limit before the thread is ended: starting a thread, loading the plugins, the event in hand. */
const ABORT_GRACE_MS = 20_000;
/** Tasks waiting for a thread at most; one more is refused (DraftPoolBusy). */
export const MAX_QUEUED = 4;

/** Runs one task on a thread, ending it when `signal` aborts (piscina in the server). */
export type DraftExecutor = (task: DraftWorkerTask, signal: AbortSignal) => Promise<DraftResult>;

export interface DraftPoolOptions {
  /** The plugin folders (Config.pluginsDirs): each thread loads the plugins from them. */
  pluginsDir: PluginFolders;
  /** Default DRAFT_TIME_LIMIT_MS. */
  timeLimitMs?: number;
  /** Default 1: one replay (they run one at a time) or preview at once, the rest queued. */
  threads?: number;
  /** Default ABORT_GRACE_MS. */
  abortGraceMs?: number;
  /** Default: piscina over draft-worker.ts (tests hold tasks with their own). */
  execute?: DraftExecutor;
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
  const abortGraceMs = opts.abortGraceMs ?? ABORT_GRACE_MS;
  const gate = createTaskGate(opts.threads ?? 1, { maxWaiting: MAX_QUEUED, full: () => new DraftPoolBusy(`${MAX_QUEUED} previews are already waiting`) });
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
  const execute: DraftExecutor = opts.execute ?? (async (task, signal) => (await pool().run(task, { signal })) as DraftResult);
  return {
    timeLimitMs,
    async run(request) {
      const { budgetMs, ...rest } = request;
      const limit = Math.max(0, Math.ceil(Math.min(timeLimitMs, budgetMs ?? timeLimitMs)));
      const task: DraftWorkerTask = { ...rest, timeLimitMs: limit, pluginsDir: opts.pluginsDir };
      await gate.enter();
      try {
        // The clock starts now that the task has a thread, not when it was queued.
        return await execute(task, AbortSignal.timeout(limit + abortGraceMs));
      } catch (err) {
        const e = err as Error;
        if (e.name === 'AbortError' || e.name === 'TimeoutError') throw new DraftStopped(`ran past its time limit of ${timeLimitMs} ms and was stopped`);
        throw err;
      } finally {
        gate.leave();
      }
    },
    async close() {
      await piscina?.destroy();
      piscina = undefined;
    },
  };
}
