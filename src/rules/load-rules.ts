// Validates rule documents and builds the rule set from them: every rule file under
// RULES_DIR (`<destination>.json` defaults, `accounts/<SCRIPT_ID>/<destination>.json`
// overrides), optionally overlaid by documents kept elsewhere (live store versions, a draft),
// each replacing the file of its scope and destination. All or nothing: one bad document and
// the result is the list of errors (file, JSON Pointer, message); loadRules then also gives
// the partial set the watcher serves while the rules have never loaded whole: the good
// documents, with each bad one's scope held (rule-holds.ts).
import { isAbsolute, relative } from 'node:path';
import { checkExpression } from './check-expression.ts';
import { ruleFileCostProblems } from './rule-cost.ts';
import { dotPathProblem } from '../destinations/dot-path.ts';
import { literalOutputProblems, type NativeSchemaOf } from '../destinations/native-schema.ts';
import { childPointer } from './json-pointer.ts';
import { checkRuleFileSchema } from './rule-schema.ts';
import { createRuleSet, type LoadedRuleFile, type RuleSet } from './rule-set.ts';
import type { HeldScope } from './rule-holds.ts';
import { pluginsDirFor } from './plugin-rules.ts';
import type { PluginFolders } from '../destinations/load-plugins.ts';
import { RULE_FILE_LIMITS, listRuleFiles, readRuleFile, type RuleLoadError } from './rule-files.ts';
import type { RuleFile, RuleSpec } from './types.ts';

export { RULE_FILE_LIMITS, type RuleLoadError } from './rule-files.ts';

export type LoadRulesResult =
  | { ok: true; ruleSet: RuleSet; files: number; rules: number }
  | { ok: false; errors: RuleLoadError[]; files: number; rules: number; partial?: RuleSet };

/** One parsed rule document to check: a file's JSON, a stored version, or a draft. */
export interface RuleDocumentInput {
  /** How errors name it: a file path, or e.g. `version 12 (default/ga4)`. */
  file: string;
  /** Null for defaults, the script id for an account's overrides. */
  scriptId: string | null;
  parsed: unknown;
  /**
   * The destination its place says: absent for a file (its name says it, and a mismatch is
   * reported against the file name); given for a document kept elsewhere, whose size is then
   * checked here (a file's is checked before it is read).
   */
  destination?: string;
  /** The store version it is; absent for files and drafts. */
  version?: number;
}

/** A document that replaces the file of the same scope and destination (or adds one). */
export interface OverlayDocument extends RuleDocumentInput {
  destination: string;
}

export interface LoadRulesOptions {
  /** File names in errors are relative to this directory when inside it. Default: the working directory. */
  displayBase?: string;
  /** Documents that take the place of files: the live store versions, a draft being checked. */
  overlay?: readonly OverlayDocument[];
  /** Plugin folders (one, or several in load order) whose rules.json files are the base layer; default: the ones registered for `dir` (plugin-rules.ts). */
  pluginsDir?: PluginFolders;
  /**
   * The destinations' native schemas: when given, a literal output a schema refuses is an
   * error at its output key (checks and writes; loading itself leaves that to delivery).
   */
  nativeSchemaOf?: NativeSchemaOf;
}

/** `file: path: message`, or `file: message` for a whole-file problem. */
export function formatRuleError(e: RuleLoadError): string {
  return e.path === '' ? `${e.file}: ${e.message}` : `${e.file}: ${e.path}: ${e.message}`;
}

/** The key of a (scope, destination): what an overlay document replaces. */
export const documentKey = (scriptId: string | null, destination: string): string => `${scriptId ?? ''}/${destination}`;

interface Disable {
  file: string;
  destination: string;
  id: string;
  path: string;
}

/**
 * @example
 * const r = loadRules('/srv/tracklane/rules');
 * if (r.ok) r.ruleSet.rulesFor('AB12CD34', 'ga4');
 * else for (const e of r.errors) console.error(formatRuleError(e));
 */
export function loadRules(dir: string, opts: LoadRulesOptions = {}): LoadRulesResult {
  const base = opts.displayBase ?? process.cwd();
  const show = (abs: string) => {
    const rel = relative(base, abs);
    return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? abs : rel;
  };
  const errors: RuleLoadError[] = [];
  const overlay = opts.overlay ?? [];
  const replaced = new Set(overlay.map((d) => documentKey(d.scriptId, d.destination)));
  const files = listRuleFiles(dir, show, errors, pluginsDirFor(dir, opts.pluginsDir)).filter((f) => !replaced.has(documentKey(f.scriptId, f.destination)));
  // Problems of no one document (the folder, a misplaced file) hold everything.
  const held: HeldScope[] = errors.slice(0, 1).map((error) => ({ scriptId: null, destination: null, error }));
  const checker = createChecker(errors, opts.nativeSchemaOf);
  const checked = (file: string, scope: Pick<HeldScope, 'scriptId' | 'destination'>, fn: () => void) => {
    const before = errors.length;
    checker.guarded(file, fn);
    if (errors.length > before) held.push({ scriptId: scope.scriptId, destination: scope.destination, error: errors[before] });
  };
  for (const f of files) {
    const file = show(f.abs);
    checked(file, f, () => {
      const parsed = readRuleFile(f.abs, file, errors);
      if (parsed !== undefined) checker.check({ file, scriptId: f.scriptId, parsed }, f.destination, false);
    });
  }
  for (const d of overlay) checked(d.file, d, () => checker.check(d, d.destination, true));
  const r = checker.finish(dir, files.length + overlay.length);
  return r.ok ? r : { ...r, partial: checker.partial(dir, held) };
}

/**
 * The checks of loadRules on documents already parsed, as one set (an account may only
 * disable what the defaults among `docs` have). `dir` only labels the rule set.
 */
export function checkRuleDocuments(docs: readonly RuleDocumentInput[], dir = '', nativeSchemaOf?: NativeSchemaOf): LoadRulesResult {
  const errors: RuleLoadError[] = [];
  const checker = createChecker(errors, nativeSchemaOf);
  for (const d of docs) {
    const kept = d.destination !== undefined;
    checker.guarded(d.file, () => checker.check(d, d.destination ?? basenameOf(d.file), kept));
  }
  return checker.finish(dir, docs.length);
}

const basenameOf = (file: string): string => file.replace(/^.*[\\/]/, '').replace(/\.json$/, '');

/** Checks documents one by one into `errors`, then the set as a whole. */
function createChecker(errors: RuleLoadError[], nativeSchemaOf?: NativeSchemaOf) {
  const loaded: LoadedRuleFile[] = [];
  const disables: Disable[] = [];
  let rules = 0;
  return {
    /** Whatever goes wrong with one document is that document's error, never the process's. */
    guarded(file: string, fn: () => void): void {
      try {
        fn();
      } catch (err) {
        errors.push({ file, path: '', message: `could not be checked: ${(err as Error).message}` });
      }
    },
    /** `expected`: the destination its place says; `kept`: not a file (its size is checked here). */
    check(d: RuleDocumentInput, expected: string, kept: boolean): void {
      const { file, parsed } = d;
      if (isRecord(parsed) && Array.isArray(parsed.rules)) rules += parsed.rules.length;
      if (kept) {
        const bytes = Buffer.byteLength(JSON.stringify(parsed) ?? '');
        if (bytes > RULE_FILE_LIMITS.bytes) {
          errors.push({ file, path: '', message: `RULE_FILE_TOO_LARGE: ${bytes} bytes; a rule file may have at most ${RULE_FILE_LIMITS.bytes} (split it)` });
          return;
        }
      }
      const problems = checkRuleFileSchema(parsed);
      if (problems.length > 0) {
        for (const p of problems) errors.push({ file, ...p });
        return;
      }
      const ruleFile = parsed as RuleFile;
      const before = errors.length;
      checkRuleFile(ruleFile, file, expected, kept, errors);
      if (errors.length === before) for (const p of ruleFileCostProblems(ruleFile.rules)) errors.push({ file, ...p });
      const schema = errors.length === before ? nativeSchemaOf?.(ruleFile.destination) : undefined;
      if (schema !== undefined) for (const p of literalOutputErrors(ruleFile, schema)) errors.push({ file, ...p });
      if (errors.length > before) return;
      if (d.scriptId !== null) {
        ruleFile.rules.forEach((r, i) => {
          if (r.disabled === true) disables.push({ file, destination: ruleFile.destination, id: r.id, path: childPointer('/rules', i) });
        });
      }
      loaded.push(deepFreeze({
        file,
        destination: ruleFile.destination,
        scriptId: d.scriptId,
        rules: ruleFile.rules.filter((r) => r.disabled !== true),
        disabled: ruleFile.rules.filter((r) => r.disabled === true).map((r) => r.id),
        ...(d.version === undefined ? {} : { version: d.version }),
      }));
    },
    finish(dir: string, files: number): LoadRulesResult {
      if (errors.length === 0) checkDisables(loaded, disables, errors);
      if (errors.length > 0) return { ok: false, errors, files, rules };
      return { ok: true, ruleSet: createRuleSet(dir, loaded), files, rules };
    },
    /**
     * The good documents as a set holding `held` (the bad documents' scopes): an account's
     * file is left out when its destination's defaults are held, or when it disables a
     * rule the remaining defaults lack (then its own scope is held too).
     */
    partial(dir: string, held: readonly HeldScope[]): RuleSet {
      if (held.some((h) => h.destination === null)) return createRuleSet(dir, [], held.filter((h) => h.destination === null));
      const heldDefaults = new Set(held.filter((h) => h.scriptId === null).map((h) => h.destination));
      let kept = loaded.filter((f) => f.scriptId === null || !heldDefaults.has(f.destination));
      const late: RuleLoadError[] = [];
      checkDisables(kept, disables.filter((d) => kept.some((f) => f.file === d.file)), late);
      const more = kept.flatMap((f): HeldScope[] => {
        const error = late.find((e) => e.file === f.file);
        return error === undefined ? [] : [{ scriptId: f.scriptId, destination: f.destination, error }];
      });
      kept = kept.filter((f) => !more.some((h) => h.error.file === f.file));
      return createRuleSet(dir, kept, [...held, ...more]);
    },
  };
}

/** What the schema cannot say: the destination its place says, unique ids, and every json-logic expression. */
function checkRuleFile(rf: RuleFile, file: string, expected: string, kept: boolean, errors: RuleLoadError[]): void {
  if (rf.rules.length > RULE_FILE_LIMITS.rules) {
    errors.push({ file, path: '/rules', message: `RULE_FILE_TOO_LARGE: ${rf.rules.length} rules; a rule file may have at most ${RULE_FILE_LIMITS.rules}` });
    return;
  }
  if (rf.destination !== expected) {
    const place = kept ? 'the destination it is published for' : 'the file name';
    errors.push({ file, path: '/destination', message: `"${rf.destination}" does not match ${place}; expected "${expected}"` });
  }
  const firstIndex = new Map<string, number>();
  rf.rules.forEach((rule, i) => {
    const at = childPointer('/rules', i);
    const seen = firstIndex.get(rule.id);
    if (seen !== undefined) errors.push({ file, path: `${at}/id`, message: `duplicate rule id "${rule.id}" (first at /rules/${seen})` });
    else firstIndex.set(rule.id, i);
    if (rule.disabled === true) return;
    for (const p of checkRule(rule, at)) errors.push({ file, ...p });
  });
}

function checkRule(rule: RuleSpec, at: string): { path: string; message: string }[] {
  const problems = rule.when === undefined ? [] : checkExpression(rule.when, `${at}/when`);
  const keys = Object.keys(rule.output);
  for (const k of keys) {
    const path = childPointer(`${at}/output`, k);
    const bad = dotPathProblem(k);
    if (bad !== null) problems.push({ path, message: bad });
    const parent = keys.find((other) => k.startsWith(`${other}.`));
    if (parent !== undefined) {
      problems.push({ path, message: `overlaps the output key "${parent}"; write every field of "${parent}" as its own dot path` });
    }
    problems.push(...checkExpression(rule.output[k], path));
  }
  return problems;
}

/**
 * The literal outputs of a checked rule file's enabled rules that `schema` (its destination's
 * native schema) refuses, at their output keys.
 */
export function literalOutputErrors(rf: RuleFile, schema: Record<string, unknown>): { path: string; message: string }[] {
  return rf.rules.flatMap((rule, i) => rule.disabled === true ? [] : literalOutputProblems(schema, rule.output).map((p) => ({
    path: childPointer(`${childPointer('/rules', i)}/output`, p.key),
    message: `the ${rf.destination} native schema refuses this value (${p.problems.join('; ')}): the rule could never send`,
  })));
}

/** An account may only disable rules that exist among the defaults of that destination. */
function checkDisables(files: readonly LoadedRuleFile[], disables: readonly Disable[], errors: RuleLoadError[]): void {
  const defaults = new Map<string, Set<string>>();
  for (const f of files) {
    if (f.scriptId === null) defaults.set(f.destination, new Set([...f.rules.map((r) => r.id), ...f.disabled]));
  }
  for (const d of disables) {
    if (defaults.get(d.destination)?.has(d.id)) continue;
    errors.push({ file: d.file, path: `${d.path}/id`, message: `disables "${d.id}", which is not a default ${d.destination} rule` });
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
