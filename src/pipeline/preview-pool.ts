// The threads endpoint 2 (and test mode of custom endpoints) plans its previews in: piscina
// over preview-worker.ts, so previews run on every core instead of queueing on the HTTP
// thread, which parses, authenticates, validates and answers. The account's rules for each
// destination type go to a thread once, under a key (a list the thread has not seen is asked
// for and sent with the task again). A pool that fails (its thread cannot start, a task
// crashes it) is left alone for a minute while previews are planned on the calling thread:
// the same function, the same answer.
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { siblingModule } from '../build-state.cjs';
import type { DestinationPreview, PreviewInput } from './preview-event.ts';
import type { RuleSet } from '../rules/rule-set.ts';
import type { RuleSpec } from '../rules/types.ts';
import type { PreviewAnswer, PreviewTask } from './preview-worker.ts';
import { workerExecArgv, workerResourceLimits } from '../workers/worker-options.ts';

/** After a failure, previews are planned on the calling thread for this long. */
const REST_MS = 60_000;

export interface PreviewPool {
  /** Plans `input` with `rules` on a pool thread; null when the pool is resting after a failure (plan it here). */
  plan(input: PreviewInput, rules: RuleSet): Promise<DestinationPreview[] | null>;
  close(): Promise<void>;
}

export interface PreviewPoolOptions {
  pluginsDir: string;
  /** Default: one per core. */
  threads?: number;
  onError?: (err: unknown, restMs: number) => void;
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
    resourceLimits: workerResourceLimits(),
  }));
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
  pool();

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
      try {
        let answer = (await pool().run(task)) as PreviewAnswer;
        if (answer.kind === 'need') {
          const need = new Set(answer.keys);
          answer = (await pool().run({ ...task, lists: lists.map((l) => (need.has(l.key) ? { ...l, rules: byKey.get(l.key) as RuleSpec[] } : l)) })) as PreviewAnswer;
        }
        if (answer.kind === 'done') return answer.preview;
        throw new Error('a preview thread asked for rules it was sent');
      } catch (err) {
        if (closed) throw err;
        restsUntil = Date.now() + REST_MS;
        const broken = piscina;
        piscina = undefined;
        void broken?.destroy().catch(() => undefined);
        opts.onError?.(err, REST_MS);
        return null;
      }
    },
    async close() {
      closed = true;
      await piscina?.destroy();
      piscina = undefined;
    },
  };
}
