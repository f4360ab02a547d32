// The pool custom handlers run in: piscina worker threads with a memory limit, and a hard
// time limit per call enforced by aborting the task, which terminates its thread. So one
// customer's endless loop or runaway allocation costs that request a 500 and one worker
// restart, while intake, health checks and every other tenant keep being served.
//
// What the threads are given, and what they are not (customers/README.md, "What a handler
// can and cannot do"):
// - an environment of their own holding only HANDLER_ENV_KEYS: none of the service's
//   variables (ADMIN_TOKEN(S), DATABASE_URL, signing secrets) are in a handler's process.env;
// - a memory limit counted twice: V8's heap by resourceLimits, and what V8 does not count
//   (Buffers, ArrayBuffers, other external memory) by the worker itself after each call,
//   which ends its thread when over the limit (handler-worker.ts) and fails that call.
import { availableParallelism } from 'node:os';
import { MessageChannel } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { runsCompiled, siblingModule } from '../build-state.cjs';
import { HANDLER_OVER_MEMORY_EXIT, type HandlerTask, type HandlerTaskResult, type HandlerWorkerData } from './handler-worker.ts';
import { workerExecArgv } from '../workers/worker-options.ts';

export interface HandlerPoolOptions {
  /** Memory limit of each worker, MiB: V8's old generation, and separately what lies outside V8's heap. Default 128. */
  memoryMb?: number;
  /** Worker threads at most. Default: max(2, CPU count). */
  threads?: number;
}

export interface HandlerPool {
  /** Runs one call; rejects with HandlerStopped when it runs out of time or memory (`timeoutMs` counts from the call's start in its thread). */
  run(task: HandlerTask, timeoutMs: number): Promise<HandlerTaskResult>;
  close(): Promise<void>;
}

/** How long a call may wait for a thread (queued behind others, or its thread starting) before it fails. */
export const HANDLER_QUEUE_WAIT_MS = 30_000;

export class HandlerStopped extends Error {
  override name = 'HandlerStopped';
}

/**
 * The only variables a handler's process.env holds, copied from the service's when set:
 * what a pure function may reasonably consult (the time zone of Date, the mode). A handler
 * that needs configuration gets it from endpoint.json's `settings` (ctx.settings).
 */
export const HANDLER_ENV_KEYS = ['NODE_ENV', 'TZ'] as const;

export function handlerEnv(from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of HANDLER_ENV_KEYS) if (from[k] !== undefined) env[k] = from[k]!;
  return env;
}

// The compiled module when this one is (npm start from dist/); among the sources, a CommonJS
// entry that registers tsx's require hook in the thread itself, so the thread's flags carry
// no loader and nothing of the service's command line but what workerExecArgv keeps.
const WORKER_FILE = runsCompiled(import.meta.url)
  ? siblingModule(import.meta.url, 'handler-worker')
  : fileURLToPath(new URL('./handler-entry.cjs', import.meta.url));

export function createHandlerPool(opts: HandlerPoolOptions = {}): HandlerPool {
  const memoryMb = opts.memoryMb ?? 128;
  const workerData: HandlerWorkerData = { maxExternalBytes: memoryMb * 1024 * 1024 };
  let piscina: Piscina | undefined;
  const pool = () => (piscina ??= new Piscina({
    filename: WORKER_FILE,
    // One thread stays warm once started (a worker with tsx takes a few hundred ms to start).
    minThreads: 1,
    maxThreads: opts.threads ?? Math.max(2, availableParallelism()),
    idleTimeout: 30_000,
    resourceLimits: { maxOldGenerationSizeMb: memoryMb, maxYoungGenerationSizeMb: Math.min(32, memoryMb), stackSizeMb: 4 },
    execArgv: workerExecArgv(WORKER_FILE),
    env: handlerEnv(),
    workerData,
  }));
  return {
    async run(task, timeoutMs) {
      // The time limit starts when the task starts in its thread (the worker says so on
      // `started`), so it measures the handler, its module's loading included, and not a
      // thread's start-up or a wait in the queue, which have their own, longer bound.
      const { port1, port2 } = new MessageChannel();
      port1.unref();
      const abort = new AbortController();
      let reason = `waited more than ${HANDLER_QUEUE_WAIT_MS} ms for a handler thread`;
      let timer = setTimeout(() => abort.abort(), HANDLER_QUEUE_WAIT_MS);
      port1.once('message', () => {
        clearTimeout(timer);
        reason = `took longer than ${timeoutMs} ms and was stopped`;
        timer = setTimeout(() => abort.abort(), timeoutMs);
      });
      try {
        return (await pool().run({ ...task, started: port2 }, { signal: abort.signal, transferList: [port2] })) as HandlerTaskResult;
      } catch (err) {
        if (abort.signal.aborted) throw new HandlerStopped(reason);
        const e = err as Error & { code?: string };
        if (e.code === 'ERR_WORKER_OUT_OF_MEMORY') throw new HandlerStopped(`used more than ${memoryMb} MiB and was stopped`);
        // piscina's words for a thread that ended during the task; the code is the worker's own.
        if (e.message === `worker exited with code: ${HANDLER_OVER_MEMORY_EXIT}`) {
          throw new HandlerStopped(`held more than ${memoryMb} MiB outside the JavaScript heap (buffers) and was stopped`);
        }
        throw err;
      } finally {
        clearTimeout(timer);
        port1.close();
      }
    },
    async close() {
      await piscina?.destroy();
      piscina = undefined;
    },
  };
}
