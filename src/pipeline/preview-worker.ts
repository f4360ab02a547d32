// Worker entry of the preview pool (preview-pool.ts): endpoint 2's pipeline for one event
// (identifiers hashed here, every destination mapped, its requests built and masked) off the
// HTTP thread. The rule lists travel as plain data, each under a key, once per thread: a task
// that names a list this thread has not seen asks for it, and the caller sends it again with
// the list. Plugins are code, loaded by each thread from PLUGINS_DIR. Loaded through tsx's
// require hook on Node 20: no top-level await.
import { pluginsOnce, type PluginFolders } from '../destinations/load-plugins.ts';
import { planPreview, type PlannedPreview, type PreviewInput } from './preview-event.ts';
import { createRuleSet, type RuleSet } from '../rules/rule-set.ts';
import type { RuleSpec } from '../rules/types.ts';

export interface PreviewTask {
  pluginsDir: PluginFolders;
  input: PreviewInput;
  /** Per destination type of the event's destinations: the key of the rules the account's destinations of it use, and the rules where the thread may not know them yet. */
  lists: { type: string; key: string; rules?: RuleSpec[] }[];
}

export type PreviewAnswer = { kind: 'done'; planned: PlannedPreview } | { kind: 'need'; keys: string[] } | { kind: 'warm' };

/** Loads the plugins before any preview is timed (the pool sends one per thread when it starts). */
export interface WarmTask {
  pluginsDir: PluginFolders;
  warm: true;
}

/** Rule lists and rule sets this thread keeps, at most: past it, they are forgotten and asked for again. */
const KEEP = 512;

const lists = new Map<string, RuleSpec[]>();
const sets = new Map<string, RuleSet>();

export default async function runPreviewTask(task: PreviewTask | WarmTask): Promise<PreviewAnswer> {
  const registry = pluginsOnce(task.pluginsDir);
  if ('warm' in task) {
    await registry;
    return { kind: 'warm' };
  }
  if (lists.size + task.lists.length > KEEP) {
    lists.clear();
    sets.clear();
  }
  for (const l of task.lists) if (l.rules !== undefined) lists.set(l.key, l.rules);
  const missing = task.lists.filter((l) => !lists.has(l.key)).map((l) => l.key);
  if (missing.length > 0) return { kind: 'need', keys: missing };
  // A set per combination of lists, kept: rules compile once per list, on first use.
  const setKey = task.lists.map((l) => `${l.type}=${l.key}`).join('&');
  let set = sets.get(setKey);
  if (set === undefined) {
    set = createRuleSet('', task.lists.map((l) => ({ file: `preview (${l.type})`, destination: l.type, scriptId: null, rules: lists.get(l.key)!, disabled: [] })));
    sets.set(setKey, set);
  }
  const rules = set;
  return { kind: 'done', planned: await planPreview({ plugins: await registry, rules: () => rules, pool: null }, task.input) };
}
