// What the admin API's rules preview and replay-through-draft compute, as one plain-data
// task that can cross to a worker thread (src/admin/draft-pool.ts): events planned with
// the live rules and with a draft, side by side. Only the rule lists the events need travel,
// each once; the task stops itself between events once its time limit has passed.
import type { PluginRegistry } from '../destinations/load-plugins.ts';
import { createRuleSet, type LoadedRuleFile } from '../rules/rule-set.ts';
import type { RuleSet } from '../rules/rule-set.ts';
import type { RuleSpec } from '../rules/types.ts';
import { previewEvent, type DestinationPreview, type PreviewInput } from './preview-event.ts';

/** One event to plan (a preview plans each destination as a subject of its own), and which of the task's rule lists its account's destinations use before and after. */
export interface DraftSubject {
  input: PreviewInput;
  /** Index in DraftTask.lists, for (account, destination type) with the live rules. */
  before: number;
  /** The same with the draft. */
  after: number;
  /** For a replay's samples. */
  event: { id: string; event_id: string | null; name: string | null };
}

export interface DraftTask {
  kind: 'preview' | 'replay';
  /** The destination type the draft is for. */
  type: string;
  lists: RuleSpec[][];
  subjects: DraftSubject[];
  /** Planning stops at the first subject that would start after this many ms. */
  timeLimitMs: number;
}

export interface ReplayTally {
  events: number;
  requests_before: number;
  requests_after: number;
  events_changed: number;
  destinations_changed: number;
  samples: { id: string; event_id: string | null; name: string | null; destination_id: string }[];
}

/**
 * A task as the admin API builds it: the runner adds its time limit, or `budgetMs` when that
 * is less (what a run planned in several tasks, page by page, has left of it).
 */
export type DraftRequest = Omit<DraftTask, 'timeLimitMs'> & { budgetMs?: number };

/** Where tasks run: a worker pool in the server (src/admin/draft-pool.ts), inline in the fast test tier. */
export interface DraftRunner {
  readonly timeLimitMs: number;
  /** Rejects with DraftPoolBusy or DraftStopped (draft-pool.ts) when it cannot run the task or had to end it. */
  run(task: DraftRequest): Promise<DraftResult>;
  close(): Promise<void>;
}

export type DraftResult =
  | { kind: 'preview'; before: DestinationPreview[]; after: DestinationPreview[] }
  /** `planningMs`: the time the task spent planning (a paged replay's pages share one limit). */
  | { kind: 'replay'; tally: ReplayTally; planningMs: number }
  | { kind: 'stopped'; done: number; of: number };

/** The rule lists of a task: `add` gives each distinct list (by identity) one index. */
export function ruleLists(): { lists: RuleSpec[][]; add(rules: readonly RuleSpec[]): number } {
  const lists: RuleSpec[][] = [];
  const index = new Map<readonly RuleSpec[], number>();
  return {
    lists,
    add(rules) {
      let i = index.get(rules);
      if (i === undefined) {
        index.set(rules, (i = lists.length));
        lists.push(rules as RuleSpec[]);
      }
      return i;
    },
  };
}

/**
 * Plans every subject with both rule sets, in order, on the calling thread.
 * @example
 * const r = await runDraftTask(task, plugins);
 * if (r.kind === 'stopped') … // past task.timeLimitMs after r.done of r.of events
 */
export async function runDraftTask(task: DraftTask, plugins: PluginRegistry): Promise<DraftResult> {
  const started = performance.now();
  const before = ruleSetOf(task, 'before');
  const after = ruleSetOf(task, 'after');
  const tally: ReplayTally = { events: 0, requests_before: 0, requests_after: 0, events_changed: 0, destinations_changed: 0, samples: [] };
  const previews: { before: DestinationPreview[]; after: DestinationPreview[] } = { before: [], after: [] };
  for (let i = 0; i < task.subjects.length; i++) {
    if (i > 0 && performance.now() - started > task.timeLimitMs) return { kind: 'stopped', done: i, of: task.subjects.length };
    const s = task.subjects[i];
    const [b, a] = await Promise.all([
      previewEvent({ plugins, rules: () => before, pool: null }, s.input),
      previewEvent({ plugins, rules: () => after, pool: null }, s.input),
    ]);
    if (task.kind === 'replay') count(tally, s, b, a);
    else {
      previews.before.push(...b);
      previews.after.push(...a);
    }
  }
  return task.kind === 'replay' ? { kind: 'replay', tally, planningMs: performance.now() - started } : { kind: 'preview', ...previews };
}

function count(tally: ReplayTally, s: DraftSubject, before: DestinationPreview[], after: DestinationPreview[]): void {
  tally.events++;
  let changed = false;
  before.forEach((b, i) => {
    const a = after[i];
    tally.requests_before += b.requests.length;
    tally.requests_after += a.requests.length;
    if (JSON.stringify(b) === JSON.stringify(a)) return;
    changed = true;
    tally.destinations_changed++;
    if (tally.samples.length < 10) tally.samples.push({ ...s.event, destination_id: b.destination_id });
  });
  if (changed) tally.events_changed++;
}

/** A rule set that answers rulesFor(account, type) with the list each subject names for `side`. */
function ruleSetOf(task: DraftTask, side: 'before' | 'after'): RuleSet {
  const files = new Map<string, LoadedRuleFile>();
  for (const s of task.subjects) {
    const scriptId = s.input.account.scriptId;
    files.set(scriptId, { file: `${side} (${scriptId}/${task.type})`, destination: task.type, scriptId, rules: task.lists[s[side]], disabled: [] });
  }
  return createRuleSet('', [...files.values()]);
}
