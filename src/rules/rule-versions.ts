// Changing the rules in the store, as the CLI and the admin API both do it: a draft is
// checked against the effective rules (files overlaid by the live versions) exactly as loading
// will check them, and only then published; the same for a rollback and for importing the
// rule files. Writes are guarded by the revision the check saw, so two changes checked at
// once cannot together make a set the watcher would refuse. Plus what is live, and diffs.
import { isDeepStrictEqual } from 'node:util';
import { SCRIPT_ID_RE } from '../accounts/credentials.ts';
import { StaleRuleRevisionError, type NewRuleVersion, type RuleChange, type RuleVersion, type RuleVersionStore } from '../store/types.ts';
import { checkRuleDocuments, documentKey, literalOutputErrors, loadRules, type OverlayDocument, type RuleLoadError } from './load-rules.ts';
import type { NativeSchemaOf } from '../destinations/native-schema.ts';
import { pluginsDirFor } from './plugin-rules.ts';
import { readRuleFiles } from './rule-files.ts';
import { DESTINATION_NAME_RE } from './rule-schema.ts';
import type { RuleSet } from './rule-set.ts';
import { DEFAULT_SCOPE, scopeOf, scriptIdOf, versionDocument, versionLabel } from './stored-rules.ts';
import type { RuleFile } from './types.ts';

export { diffRules, type RuleDiffEntry } from './rule-diff.ts';

/** A problem with a draft: `path` is a JSON Pointer into it; `file` names another document the draft would break. */
export interface RuleProblem {
  path: string;
  message: string;
  file?: string;
}

export type DraftCheck = { ok: true; ruleSet: RuleSet } | { ok: false; errors: RuleProblem[] };
export type RuleWriteResult = { ok: true; version: RuleVersion } | { ok: false; errors: RuleProblem[] };

/** A rule file meant for (scope, destination); scope is `default` or a script id. */
export interface RuleDraft {
  scope: string;
  destination: string;
  /** The rule file `{destination, rules}` as it would be published (parsed JSON, not yet checked). */
  document: unknown;
}

export interface RuleVersionDeps {
  store: RuleVersionStore;
  /** RULES_DIR. */
  dir: string;
  /** The destinations' native schemas: a draft whose literal output one refuses is not published. */
  nativeSchemaOf?: NativeSchemaOf;
}

/** What a draft is checked against: RULES_DIR, the store's live versions, and optionally the native schemas. */
export interface DraftCheckBase {
  dir: string;
  live: readonly RuleVersion[];
  nativeSchemaOf?: NativeSchemaOf;
}

/**
 * The effective rules with `draft` in place of its (scope, destination), checked as loading
 * checks them: the draft itself, and every other document it could break (an account
 * disabling a default the draft removes). `current.live`: the store's live versions. With
 * `current.nativeSchemaOf`, also the draft's literal outputs against its destination's
 * native schema (a rule that could never send).
 */
export function checkDraft(current: DraftCheckBase, draft: RuleDraft, label = `draft (${draft.scope}/${draft.destination})`): DraftCheck {
  const place = placeProblems(draft.scope, draft.destination);
  if (place.length > 0) return { ok: false, errors: place };
  const key = documentKey(scriptIdOf(draft.scope), draft.destination);
  const overlay: OverlayDocument[] = current.live.map(versionDocument).filter((d) => documentKey(d.scriptId, d.destination) !== key);
  overlay.push({ file: label, scriptId: scriptIdOf(draft.scope), destination: draft.destination, parsed: draft.document });
  const r = loadRules(current.dir, { displayBase: current.dir, overlay });
  if (!r.ok) return { ok: false, errors: r.errors.map((e) => (e.file === label ? { path: e.path, message: e.message } : { ...e })) };
  const schema = current.nativeSchemaOf?.(draft.destination);
  const literal = schema === undefined ? [] : literalOutputErrors(draft.document as RuleFile, schema);
  return literal.length > 0 ? { ok: false, errors: literal } : { ok: true, ruleSet: r.ruleSet };
}

function placeProblems(scope: string, destination: string): RuleProblem[] {
  const problems: RuleProblem[] = [];
  if (scope !== DEFAULT_SCOPE && !SCRIPT_ID_RE.test(scope)) {
    problems.push({ path: '', message: `scope "${scope}" is neither "default" nor a script id (8 characters A-Z, 0-9)` });
  }
  if (!DESTINATION_NAME_RE.test(destination)) {
    problems.push({ path: '', message: `"${destination}" is not a destination name (lower-case letters, digits and -)` });
  }
  return problems;
}

/** Checks the draft, then stores it as the new live version of its (scope, destination). */
export function publishRules(deps: RuleVersionDeps, input: RuleDraft & { author: string; message: string }, now: number): Promise<RuleWriteResult> {
  return guarded(deps.store, async (revision, live) => {
    const check = checkDraft({ dir: deps.dir, live, nativeSchemaOf: deps.nativeSchemaOf }, input);
    if (!check.ok) return check;
    const v: NewRuleVersion = { scope: input.scope, destination: input.destination, document: input.document as RuleFile, author: input.author, message: input.message };
    return { ok: true, version: await deps.store.publish(v, now, { ifRevision: revision }) };
  });
}

/** Makes `version` live again when it exists and, live, passes the checks. */
export function rollbackRules(deps: RuleVersionDeps, version: number, author: string, message: string, now: number): Promise<RuleWriteResult> {
  const missing: RuleWriteResult = { ok: false, errors: [{ path: '', message: `version ${version} does not exist` }] };
  return guarded(deps.store, async (revision, live) => {
    const target = await deps.store.get(version);
    if (target === null) return missing;
    const check = checkDraft({ dir: deps.dir, live, nativeSchemaOf: deps.nativeSchemaOf }, target, versionLabel(target));
    if (!check.ok) return check;
    const done = await deps.store.rollback(version, author, message, now, { ifRevision: revision });
    return done === null ? missing : { ok: true, version: done };
  });
}

export type RevertResult = { ok: true; change: RuleChange } | { ok: false; errors: RuleProblem[]; nothingLive?: true };

/**
 * Leaves (scope, destination) without a live version, so its RULES_DIR file or plugin default
 * (for an account without either: the defaults) serves again, when the rules then load.
 */
export function revertRules(deps: RuleVersionDeps, key: { scope: string; destination: string }, author: string, message: string, now: number): Promise<RevertResult> {
  const place = placeProblems(key.scope, key.destination);
  if (place.length > 0) return Promise.resolve({ ok: false, errors: place });
  const k = documentKey(scriptIdOf(key.scope), key.destination);
  return guarded(deps.store, async (revision, live): Promise<RevertResult> => {
    if (!live.some((v) => v.scope === key.scope && v.destination === key.destination)) {
      return { ok: false, nothingLive: true, errors: [{ path: '', message: `no published version of ${key.destination} is live in scope ${key.scope}: its file or plugin default already serves` }] };
    }
    const overlay = live.map(versionDocument).filter((d) => documentKey(d.scriptId, d.destination) !== k);
    const r = loadRules(deps.dir, { displayBase: deps.dir, overlay });
    if (!r.ok) return { ok: false, errors: r.errors.map((e) => ({ ...e })) };
    const change = await deps.store.revert(key, author, message, now, { ifRevision: revision });
    return change === null ? { ok: false, nothingLive: true, errors: [{ path: '', message: 'nothing live to revert' }] } : { ok: true, change };
  });
}

export type ImportResult =
  | { ok: true; imported: RuleVersion[]; unchanged: { scope: string; destination: string; version: number; file: string }[] }
  | { ok: false; errors: RuleLoadError[] };

/**
 * Every rule file under RULES_DIR whose document differs from its live version becomes a new
 * live version, all in one transaction, after checking the result as a whole (the files with
 * the versions of places that have no file). All or nothing.
 */
export async function importRules(deps: RuleVersionDeps, note: { author: string; message: string }, now: number): Promise<ImportResult> {
  const unreadable: RuleLoadError[] = [];
  const read = readRuleFiles(deps.dir, unreadable, pluginsDirFor(deps.dir));
  // Plugin defaults are the base layer, never imported: they count only where neither a file nor a version stands.
  const files = read.filter((f) => f.plugin !== true);
  const fileKeys = new Set(files.map((f) => documentKey(f.scriptId, f.destination)));
  return guarded(deps.store, async (revision, live): Promise<ImportResult> => {
    const storeOnly = live.map(versionDocument).filter((d) => !fileKeys.has(documentKey(d.scriptId, d.destination)));
    const liveKeys = new Set(storeOnly.map((d) => documentKey(d.scriptId, d.destination)));
    const base = read.filter((f) => f.plugin === true && f.parsed !== undefined && !liveKeys.has(documentKey(f.scriptId, f.destination)));
    const docs = files.filter((f) => f.parsed !== undefined).map((f) => ({ file: f.file, scriptId: f.scriptId, parsed: f.parsed }));
    const baseDocs = base.map((f) => ({ file: f.file, scriptId: f.scriptId, parsed: f.parsed, destination: f.destination }));
    const check = checkRuleDocuments([...docs, ...storeOnly, ...baseDocs], deps.dir);
    if (unreadable.length > 0 || !check.ok) return { ok: false, errors: [...unreadable, ...(check.ok ? [] : check.errors)] };
    const liveByKey = new Map(live.map((v) => [documentKey(scriptIdOf(v.scope), v.destination), v]));
    const changed: NewRuleVersion[] = [];
    const unchanged: { scope: string; destination: string; version: number; file: string }[] = [];
    for (const f of files) {
      const was = liveByKey.get(documentKey(f.scriptId, f.destination));
      const scope = scopeOf(f.scriptId);
      if (was !== undefined && isDeepStrictEqual(was.document, f.parsed)) unchanged.push({ scope, destination: f.destination, version: was.version, file: f.file });
      else changed.push({ scope, destination: f.destination, document: f.parsed as RuleFile, ...note });
    }
    const imported = changed.length > 0 ? await deps.store.publishAll(changed, now, { ifRevision: revision }) : [];
    return { ok: true, imported, unchanged };
  });
}

const ATTEMPTS = 5;

/** Runs `attempt` on the live versions of one revision; again when a write finds the revision moved on. */
async function guarded<T>(store: RuleVersionStore, attempt: (revision: number, live: RuleVersion[]) => Promise<T>): Promise<T> {
  for (let i = 1; ; i++) {
    const revision = await store.revision(); // before live(): a change in between makes the write stale, never wrong
    const live = await store.live();
    try {
      return await attempt(revision, live);
    } catch (err) {
      if (!(err instanceof StaleRuleRevisionError) || i >= ATTEMPTS) throw err;
    }
  }
}

/** What serves one (scope, destination): a live store version, else a RULES_DIR file, else the plugin's own rules.json. */
export interface LiveDocument {
  scope: string;
  destination: string;
  source: 'store' | 'file' | 'plugin';
  /** The store version; null for a file. */
  version: number | null;
  /** The file relative to RULES_DIR; null for a store version. */
  file: string | null;
  /** The rule file as parsed (as published, for a version); null when the file cannot be read or parsed. */
  document: unknown;
}

/** Every (scope, destination) with rules: defaults first, then accounts by script id; each by destination. */
export async function liveDocuments(dir: string, store: Pick<RuleVersionStore, 'live'>): Promise<LiveDocument[]> {
  const live = await store.live();
  const out = new Map<string, LiveDocument>();
  for (const f of readRuleFiles(dir, [], pluginsDirFor(dir))) {
    out.set(documentKey(f.scriptId, f.destination),
      { scope: scopeOf(f.scriptId), destination: f.destination, source: f.plugin === true ? 'plugin' : 'file', version: null, file: f.file, document: f.parsed ?? null });
  }
  for (const v of live) {
    out.set(documentKey(scriptIdOf(v.scope), v.destination),
      { scope: v.scope, destination: v.destination, source: 'store', version: v.version, file: null, document: v.document });
  }
  const rank = (d: LiveDocument) => `${d.scope === DEFAULT_SCOPE ? 0 : 1}${d.scope}\0${d.destination}`;
  return [...out.values()].sort((a, b) => (rank(a) < rank(b) ? -1 : rank(a) > rank(b) ? 1 : 0));
}
