// The threads endpoint 2 (and test mode of custom endpoints) plans its previews in: piscina
// over preview-worker.ts, so previews run on every core instead of queueing on the HTTP
// thread, which parses, authenticates, validates and answers. The account's rules for each
// destination type go to a thread once, under a key (a list the thread has not seen is asked
// for and sent with the task again). A pool that fails (its thread cannot start, a task
// crashes it) is left alone for a minute while previews are planned on the calling thread:
// the same function, the same answer. A task that runs past PLAN_TIMEOUT_MS, or whose
// thread runs out of its bounded heap, is not planned again anywhere: its destinations are
// answered as skipped with `rule_budget_exceeded`, so nothing one event's rules do reaches
// the HTTP thread.
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { siblingModule } from '../build-state.cjs';
import { stoppedPreviews, type PlannedPreview, type PreviewInput } from './preview-event.ts';
import type { RuleSet } from '../rules/rule-set.ts';
import type { RuleSpec } from '../rules/types.ts';
import type { PreviewAnswer, PreviewTask, WarmTask } from './preview-worker.ts';
import type { PluginFolders } from '../destinations/load-plugins.ts';
import { workerExecArgv, workerResourceLimits } from '../workers/worker-options.ts';
import { createTaskGate } from '../workers/task-gate.ts';

/** After a failure, previews are planned on the calling thread for this long. */
const REST_MS = 60_000;

/**
 * The longest one event's preview may take on a pool thread, from when a thread takes it
 * (not while it waits for one): hashing, every destination's rules (each bounded by its own
 * step budget and 250 ms) and the plugins' requests. A thread started to replace one
 * loads the plugins within it too.
 */
export const PLAN_TIMEOUT_MS = 10_000;

/** Old generation of a preview thread: far above what any event within intake's limits needs. */
export const PREVIEW_OLD_GENERATION_MB = 256;

export interface PreviewPool {
  /** Plans `input` with `rules` on a pool thread; null when the pool is resting after a failure (plan it here). */
  plan(input: PreviewInput, rules: RuleSet): Promise<PlannedPreview | null>;
  close(): Promise<void>;
}

export interface PreviewPoolOptions {
  /** The plugin folders (Config.pluginsDirs): each thread loads the plugins from them. */
  pluginsDir: PluginFolders;
  /** Default: one per core. */
  threads?: number;
  onError?: (err: unknown, restMs: number) => void;
  /** Default PLAN_TIMEOUT_MS (tests shorten it). */
  timeoutMs?: number;
}

// The compiled module when this one is (npm start from dist/), else the source through tsx.
const WORKER_FILE = siblingModule(import.meta.url, 'preview-worker');

export function createPreviewPool(opts: PreviewPoolOptions): PreviewPool {
  const threads = Math.max(1, opts.threads ?? availableParallelism());
  let piscina: Piscina | undefined;
  // Its threads start with the pool and stay: previews never wait for a thread to start.
  const pool = () => (piscina ??= new Piscina({
    filename: WORKER_FILE,
    minThreads: threads,
    maxThreads: threads,
    execArgv: workerExecArgv(WORKER_FILE),
    resourceLimits: { ...workerResourceLimits(), maxOldGenerationSizeMb: PREVIEW_OLD_GENERATION_MB },
  }));
  const timeoutMs = opts.timeoutMs ?? PLAN_TIMEOUT_MS;
  // At most one task per thread is handed to piscina, so a task's clock starts when a thread
  // takes it: the others wait in the gate, untimed, in arrival order.
  const gate = createTaskGate(threads);
  /** A key per rule list object: a rule set keeps its lists until it is replaced, so a key names one content. */
  const keys = new WeakMap<readonly RuleSpec[], string>();
  let nextKey = 0;
  const keyOf = (list: readonly RuleSpec[]) => {
    let k = keys.get(list);
    if (k === undefined) keys.set(list, (k = (nextKey++).toString(36)));
    return k;
  };
  let restsUntil = 0;
  let closed = false;
  // Each thread loads the plugins before its first timed task.
  let warm: Promise<unknown> = Promise.all(Array.from({ length: threads }, () => pool().run({ pluginsDir: opts.pluginsDir, warm: true } satisfies WarmTask)))
    .catch(() => undefined); // a pool that cannot start fails its first task, and rests

  return {
    async plan(input, rules) {
      if (closed || Date.now() < restsUntil) return null;
      const byKey = new Map<string, readonly RuleSpec[]>();
      const lists = [...new Set(input.destinations.map((d) => d.type))].map((type) => {
        const list = rules.rulesFor(input.account.scriptId, type);
        const key = keyOf(list);
        byKey.set(key, list);
        return { type, key };
      });
      const task: PreviewTask = { pluginsDir: opts.pluginsDir, input, lists };
      await warm;
      await gate.enter();
      // One clock for both runs: aborting a running task ends its thread (piscina starts another).
      const signal = AbortSignal.timeout(timeoutMs);
      try {
        let answer = (await pool().run(task, { signal })) as PreviewAnswer;
        if (answer.kind === 'need') {
          const need = new Set(answer.keys);
          answer = (await pool().run({ ...task, lists: lists.map((l) => (need.has(l.key) ? { ...l, rules: byKey.get(l.key) as RuleSpec[] } : l)) }, { signal })) as PreviewAnswer;
        }
        if (answer.kind === 'done') return answer.planned;
        throw new Error('a preview thread asked for rules it was sent');
      } catch (err) {
        if (closed) throw err;
        if (signal.aborted || isOutOfMemory(err)) {
          const why = signal.aborted ? `ran past its time limit of ${timeoutMs / 1000} s` : 'ran out of the memory a preview thread has';
          return stoppedPreviews(input, `planning this event ${why}; nothing would be sent`);
        }
        restsUntil = Date.now() + REST_MS;
        const broken = piscina;
        piscina = undefined;
        warm = Promise.resolve();
        void broken?.destroy().catch(() => undefined);
        opts.onError?.(err, REST_MS);
        return null;
      } finally {
        gate.leave();
      }
    },
    async close() {
      closed = true;
      await piscina?.destroy();
      piscina = undefined;
    },
  };
}

/** A thread ended by its heap limit: planning the same event anywhere else would do the same. */
function isOutOfMemory(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
}
