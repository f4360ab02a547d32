// The pool custom handlers run in: piscina worker threads with a memory limit, and a hard
// time limit per call enforced by aborting the task, which terminates its thread. So one
// customer's endless loop or runaway allocation costs that request a 500 and one worker
// restart, while intake, health checks and every other tenant keep being served.
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { siblingModule } from '../build-state.cjs';
import type { HandlerTask, HandlerTaskResult } from './handler-worker.ts';
import { workerExecArgv } from '../workers/worker-options.ts';

export interface HandlerPoolOptions {
  /** Heap limit of each worker, MiB (old generation). Default 128. */
  memoryMb?: number;
  /** Worker threads at most. Default: max(2, CPU count). */
  threads?: number;
}

export interface HandlerPool {
  /** Runs one call; rejects with HandlerStopped when it runs out of time or memory. */
  run(task: HandlerTask, timeoutMs: number): Promise<HandlerTaskResult>;
  close(): Promise<void>;
}

export class HandlerStopped extends Error {
  override name = 'HandlerStopped';
}

// The compiled module when this one is (npm start from dist/), else the source through tsx.
const WORKER_FILE = siblingModule(import.meta.url, 'handler-worker');

export function createHandlerPool(opts: HandlerPoolOptions = {}): HandlerPool {
  const memoryMb = opts.memoryMb ?? 128;
  let piscina: Piscina | undefined;
  const pool = () => (piscina ??= new Piscina({
    filename: WORKER_FILE,
    // One thread stays warm once started (a worker with tsx takes a few hundred ms to start).
    minThreads: 1,
    maxThreads: opts.threads ?? Math.max(2, availableParallelism()),
    idleTimeout: 30_000,
    resourceLimits: { maxOldGenerationSizeMb: memoryMb, maxYoungGenerationSizeMb: Math.min(32, memoryMb), stackSizeMb: 4 },
    execArgv: workerExecArgv(WORKER_FILE),
  }));
  return {
    async run(task, timeoutMs) {
      try {
        return (await pool().run(task, { signal: AbortSignal.timeout(timeoutMs) })) as HandlerTaskResult;
      } catch (err) {
        const e = err as Error & { code?: string };
        if (e.name === 'AbortError' || e.name === 'TimeoutError') {
          throw new HandlerStopped(`took longer than ${timeoutMs} ms and was stopped`);
        }
        if (e.code === 'ERR_WORKER_OUT_OF_MEMORY') throw new HandlerStopped(`used more than ${memoryMb} MiB and was stopped`);
        throw err;
      }
    },
    async close() {
      await piscina?.destroy();
      piscina = undefined;
    },
  };
}
