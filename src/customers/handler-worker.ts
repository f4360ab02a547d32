// Worker entry of the custom-handler pool: runs one handler.ts call in a worker thread,
// where a runaway handler (an endless loop, unbounded memory) can be stopped by
// terminating the thread without touching the main thread that serves every tenant.
// Plain data in and out: the logger becomes a recorder whose lines the main thread
// replays onto the request's real logger; a CustomValidationError comes back as its
// problems. Loaded through tsx's require hook on Node 20: no top-level await.
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
}

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  obj: Record<string, unknown>;
  msg?: string;
}

export type HandlerTaskResult =
  | { ok: true; result: unknown; logs: LogLine[] }
  | { ok: false; problems: BodyProblem[]; logs: LogLine[] }
  | { ok: false; error: string; logs: LogLine[] };

type Handler = (body: unknown, ctx: unknown) => unknown;
const loaded = new Map<string, Promise<Handler>>();

function load(file: string, fresh: string | undefined): Promise<Handler> {
  const key = fresh === undefined ? file : `${file}\u0000${fresh}`;
  let p = loaded.get(key);
  if (!p) {
    p = (loadModule(file, fresh) as Promise<{ default?: unknown }>).then((m) => {
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

/** Runs the handler once; every outcome is data, never a thrown error. */
export default async function runHandlerTask(task: HandlerTask): Promise<HandlerTaskResult> {
  const logs: LogLine[] = [];
  try {
    const handler = await load(task.file, task.fresh);
    const result = await handler(task.body, { ...task.ctx, logger: recorder(logs) });
    // Only JSON data leaves the worker: what is validated and stored is what JSON carries.
    return { ok: true, result: result === undefined ? undefined : JSON.parse(JSON.stringify(result)), logs };
  } catch (err) {
    if (isCustomValidationError(err)) return { ok: false, problems: [...err.problems], logs };
    return { ok: false, error: err instanceof Error ? err.message : String(err), logs };
  }
}
