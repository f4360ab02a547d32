// Reads and validates every rule file under RULES_DIR: `<destination>.json` defaults and
// `accounts/<SCRIPT_ID>/<destination>.json` overrides. All or nothing: one bad file and the
// result is the list of errors (file, JSON Pointer, message), never a partial rule set.
import { readdirSync, readFileSync, statSync, type Dirent } from 'node:fs';
import { basename, isAbsolute, join, relative } from 'node:path';
import { SCRIPT_ID_RE } from '../accounts/credentials.ts';
import { checkExpression } from './check-expression.ts';
import { dotPathProblem } from './dot-path.ts';
import { childPointer } from './json-pointer.ts';
import { checkRuleFileSchema } from './rule-schema.ts';
import { createRuleSet, type LoadedRuleFile, type RuleSet } from './rule-set.ts';
import type { RuleFile, RuleSpec } from './types.ts';

/** One problem in one rule file. `path` is a JSON Pointer; `` means the file as a whole. */
export interface RuleLoadError {
  file: string;
  path: string;
  message: string;
}

export type LoadRulesResult =
  | { ok: true; ruleSet: RuleSet; files: number; rules: number }
  | { ok: false; errors: RuleLoadError[]; files: number; rules: number };

export interface LoadRulesOptions {
  /** File names in errors are relative to this directory when inside it. Default: the working directory. */
  displayBase?: string;
}

/** `file: path: message`, or `file: message` for a whole-file problem. */
export function formatRuleError(e: RuleLoadError): string {
  return e.path === '' ? `${e.file}: ${e.message}` : `${e.file}: ${e.path}: ${e.message}`;
}

interface Disable {
  file: string;
  destination: string;
  id: string;
  path: string;
}

interface Found {
  abs: string;
  scriptId: string | null;
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
  const found = listRuleFiles(dir, show, errors);

  const loaded: LoadedRuleFile[] = [];
  const disables: Disable[] = [];
  let rules = 0;
  for (const f of found) {
    const file = show(f.abs);
    try {
      loadOne(f, file);
    } catch (err) {
      // Whatever goes wrong with one file is that file's error, never the process's.
      errors.push({ file, path: '', message: `could not be checked: ${(err as Error).message}` });
    }
  }

  function loadOne(f: Found, file: string): void {
    const parsed = readRuleFile(f.abs, file, errors);
    if (parsed === undefined) return;
    if (isRecord(parsed) && Array.isArray(parsed.rules)) rules += parsed.rules.length;
    const problems = checkRuleFileSchema(parsed);
    if (problems.length > 0) {
      for (const p of problems) errors.push({ file, ...p });
      return;
    }
    const ruleFile = parsed as RuleFile;
    const before = errors.length;
    checkRuleFile(ruleFile, f.abs, file, errors);
    if (errors.length > before) return;
    if (f.scriptId !== null) {
      ruleFile.rules.forEach((r, i) => {
        if (r.disabled === true) disables.push({ file, destination: ruleFile.destination, id: r.id, path: childPointer('/rules', i) });
      });
    }
    loaded.push(deepFreeze({
      file,
      destination: ruleFile.destination,
      scriptId: f.scriptId,
      rules: ruleFile.rules.filter((r) => r.disabled !== true),
      disabled: ruleFile.rules.filter((r) => r.disabled === true).map((r) => r.id),
    }));
  }

  if (errors.length === 0) checkDisables(loaded, disables, errors);
  if (errors.length > 0) return { ok: false, errors, files: found.length, rules };
  return { ok: true, ruleSet: createRuleSet(dir, loaded), files: found.length, rules };
}

/** Default files first, then account files by script id; each group by name. */
function listRuleFiles(dir: string, show: (abs: string) => string, errors: RuleLoadError[]): Found[] {
  const root = readDir(dir);
  if (root === null) {
    errors.push({ file: show(dir), path: '', message: 'rules directory does not exist or is not readable' });
    return [];
  }
  const found: Found[] = root.filter((e) => isRuleFile(dir, e)).map((e) => ({ abs: join(dir, e.name), scriptId: null }));
  const accountsDir = root.find((e) => e.name === 'accounts' && e.isDirectory());
  if (accountsDir === undefined) return found;
  for (const e of readDir(join(dir, 'accounts')) ?? []) {
    const abs = join(dir, 'accounts', e.name);
    if (isRuleFile(join(dir, 'accounts'), e)) {
      errors.push({ file: show(abs), path: '', message: 'account rule files belong in accounts/<SCRIPT_ID>/<destination>.json' });
    } else if (e.isDirectory() && !e.name.startsWith('.')) {
      if (!SCRIPT_ID_RE.test(e.name)) {
        errors.push({ file: show(abs), path: '', message: `"${e.name}" is not a script id (8 characters A-Z, 0-9)` });
        continue;
      }
      for (const f of (readDir(abs) ?? []).filter((x) => isRuleFile(abs, x))) found.push({ abs: join(abs, f.name), scriptId: e.name });
    }
  }
  return found;
}

function readDir(dir: string): Dirent[] | null {
  try {
    return readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch {
    return null;
  }
}

/** `*.json`, not hidden (editors' swap and lock files start with a dot). Symlinks followed. */
function isRuleFile(dir: string, e: Dirent): boolean {
  if (!e.name.endsWith('.json') || e.name.startsWith('.')) return false;
  if (e.isFile()) return true;
  if (!e.isSymbolicLink()) return false;
  try {
    return statSync(join(dir, e.name)).isFile();
  } catch {
    return false;
  }
}

/** Limits of one rule file: its size is checked before it is read. */
export const RULE_FILE_LIMITS = { bytes: 1024 * 1024, rules: 500 } as const;

function readRuleFile(abs: string, file: string, errors: RuleLoadError[]): unknown {
  let text: string;
  try {
    const size = statSync(abs).size;
    if (size > RULE_FILE_LIMITS.bytes) {
      errors.push({ file, path: '', message: `RULE_FILE_TOO_LARGE: ${size} bytes; a rule file may have at most ${RULE_FILE_LIMITS.bytes} (split it)` });
      return undefined;
    }
    text = readFileSync(abs, 'utf8');
  } catch (err) {
    errors.push({ file, path: '', message: `cannot read the file (${(err as NodeJS.ErrnoException).code ?? 'error'})` });
    return undefined;
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    return JSON.parse(text);
  } catch (err) {
    errors.push({ file, path: '', message: `invalid JSON: ${jsonErrorWhere(text, (err as Error).message)}` });
    return undefined;
  }
}

/** V8's message with `at position N` turned into a line and column. */
function jsonErrorWhere(text: string, message: string): string {
  const m = /\s*(?:in JSON )?at position (\d+)(?: \(line \d+ column \d+\))?/.exec(message);
  if (m === null) return message;
  const pos = Number(m[1]);
  const before = text.slice(0, pos).split('\n');
  const where = `line ${before.length}, column ${before[before.length - 1].length + 1}`;
  return `${message.slice(0, m.index)} at ${where}`;
}

/** What the schema cannot say: the file name, unique ids, and every json-logic expression. */
function checkRuleFile(rf: RuleFile, abs: string, file: string, errors: RuleLoadError[]): void {
  if (rf.rules.length > RULE_FILE_LIMITS.rules) {
    errors.push({ file, path: '/rules', message: `RULE_FILE_TOO_LARGE: ${rf.rules.length} rules; a rule file may have at most ${RULE_FILE_LIMITS.rules}` });
    return;
  }
  const expected = basename(abs, '.json');
  if (rf.destination !== expected) {
    errors.push({ file, path: '/destination', message: `"${rf.destination}" does not match the file name; expected "${expected}"` });
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
