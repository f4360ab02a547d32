// Worker entry of the custom-handler pool: runs one handler.ts call in a worker thread,
// where a runaway handler (an endless loop, unbounded memory) can be stopped by
// terminating the thread without touching the main thread that serves every tenant.
// Plain data in and out: the logger becomes a recorder whose lines the main thread
// replays onto the request's real logger; a CustomValidationError comes back as its
// problems. Loaded through tsx's require hook on Node 20: no top-level await.
// Handler modules are loaded here only, never on the main thread: the loader asks a worker
// to load each one (a `check` task) instead of importing it, so their top-level code runs
// under the same limits and with the same environment as their calls.
import { isMainThread, workerData, type MessagePort } from 'node:worker_threads';
import { isCustomValidationError } from './custom-validation-error.ts';
import type { BodyProblem } from './body-validator.ts';
import { loadModule } from '../load-module.ts';

export interface HandlerTask {
  /** Absolute path of handler.ts. */
  file: string;
  /** Set when the handler changed since it was first loaded: load it anew under this key. */
  fresh?: string;
  body: unknown;
  /** HandlerContext without its logger. */
  ctx: Record<string, unknown>;
  /** Only load the handler and check its default export (the loader's check); nothing is called. */
  check?: boolean;
  /** Told when the task starts in its thread: the pool's time limit starts then. */
  started?: MessagePort;
}

/** What the pool gives each thread (piscina's workerData). */
export interface HandlerWorkerData {
  /** Memory outside V8's heap (Buffers, ArrayBuffers) a thread may hold after a task. */
  maxExternalBytes: number;
}

/** The exit code a handler thread ends with when it holds more memory outside V8's heap than allowed. */
export const HANDLER_OVER_MEMORY_EXIT = 87;

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  obj: Record<string, unknown>;
  msg?: string;
}

export type HandlerTaskResult =
  | { ok: true; result: unknown; logs: LogLine[] }
  | { ok: false; problems: BodyProblem[]; logs: LogLine[] }
  | { ok: false; error: string; logs: LogLine[]; loadFailed?: boolean };

/** A handler module that could not be loaded at all (as opposed to one without a default export). */
class LoadFailed extends Error {}

type Handler = (body: unknown, ctx: unknown) => unknown;
const loaded = new Map<string, Promise<Handler>>();

function load(file: string, fresh: string | undefined): Promise<Handler> {
  const key = fresh === undefined ? file : `${file}\u0000${fresh}`;
  let p = loaded.get(key);
  if (!p) {
    p = (loadModule(file, fresh) as Promise<{ default?: unknown }>).catch((e: unknown) => {
      throw new LoadFailed(e instanceof Error ? e.message : String(e));
    }).then((m) => {
      if (typeof m.default !== 'function') throw new Error('handler.ts must default-export a function (body, ctx) => result');
      return m.default as Handler;
    });
    loaded.set(key, p);
  }
  return p;
}

function recorder(logs: LogLine[], bindings: Record<string, unknown> = {}): Record<string, unknown> {
  const at = (level: LogLine['level']) => (obj: unknown, msg?: string) => {
    const o = typeof obj === 'object' && obj !== null ? (obj as Record<string, unknown>) : {};
    if (logs.length < 100) logs.push({ level, obj: { ...bindings, ...o }, msg: typeof obj === 'string' ? obj : msg });
  };
  return {
    debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'),
    child: (more: Record<string, unknown>) => recorder(logs, { ...bindings, ...more }),
  };
}

/** Runs the handler once (or only loads it, for a check); every outcome is data, never a thrown error. */
export default async function runHandlerTask(task: HandlerTask): Promise<HandlerTaskResult> {
  const logs: LogLine[] = [];
  task.started?.postMessage('started');
  task.started?.close();
  try {
    const handler = await load(task.file, task.fresh);
    if (task.check) return settle({ ok: true, result: undefined, logs });
    const result = await handler(task.body, { ...task.ctx, logger: recorder(logs) });
    // Only JSON data leaves the worker: what is validated and stored is what JSON carries.
    return settle({ ok: true, result: result === undefined ? undefined : JSON.parse(JSON.stringify(result)), logs });
  } catch (err) {
    if (isCustomValidationError(err)) return settle({ ok: false, problems: [...err.problems], logs });
    return settle({ ok: false, error: err instanceof Error ? err.message : String(err), logs, ...(err instanceof LoadFailed && { loadFailed: true }) });
  }
}

/**
 * V8's heap limit (resourceLimits) does not count Buffers and ArrayBuffers, which live
 * outside it: a handler could keep gigabytes of them in a module-level variable. So once a
 * task is done, a pool thread over its limit ends itself before answering: the task fails
 * (the pool reads the exit code as "stopped for memory") and piscina starts a fresh thread,
 * so the next call runs in a clean one. `external` includes `arrayBuffers` (Node's
 * definition), and counts what the task left for the garbage collector too. Memory taken and
 * let go within one call is seen only if still uncollected when it ends. On the main thread
 * (the test tier runs tasks inline) there is no limit to enforce and no thread to end.
 */
function settle(out: HandlerTaskResult): HandlerTaskResult {
  const limit = isMainThread ? undefined : (workerData as HandlerWorkerData | null)?.maxExternalBytes;
  if (limit !== undefined && process.memoryUsage().external > limit) process.exit(HANDLER_OVER_MEMORY_EXIT);
  return out;
}
