// The rule files under RULES_DIR as loading sees them: which files count (`<destination>.json`
// defaults, with a plugin's own rules.json where RULES_DIR has none, then
// `accounts/<SCRIPT_ID>/<destination>.json`, each group by name), and reading
// one (size limit first, then JSON with line and column in its error). Problems are pushed
// as RuleLoadErrors; checking what a file says is load-rules.ts's job. The fingerprint of
// the directory is how the watcher's poll notices an edit.
import { readdirSync, readFileSync, statSync, type Dirent } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { SCRIPT_ID_RE } from '../accounts/credentials.ts';
import { pluginRuleFiles } from './plugin-rules.ts';
import type { PluginFolders } from '../destinations/load-plugins.ts';

/** One problem in one rule file. `path` is a JSON Pointer; `` means the file as a whole. */
export interface RuleLoadError {
  file: string;
  path: string;
  message: string;
}

/** Limits of one rule file: its size is checked before it is read. */
export const RULE_FILE_LIMITS = { bytes: 1024 * 1024, rules: 500 } as const;

export interface FoundRuleFile {
  abs: string;
  /** Null for a default file, the account's script id for `accounts/<SCRIPT_ID>/…`. */
  scriptId: string | null;
  /** What the file name says: `ga4` for `ga4.json` (the folder name for a plugin's rules.json). */
  destination: string;
  /** A plugin's own default file (`plugins/<name>/rules.json`), not one under RULES_DIR. */
  plugin?: true;
}

/**
 * Default files first (RULES_DIR's, and the plugins' rules.json for destinations RULES_DIR
 * has no file for), then account files by script id; each group by name.
 */
export function listRuleFiles(dir: string, show: (abs: string) => string, errors: RuleLoadError[], pluginsDir?: PluginFolders): FoundRuleFile[] {
  const root = readDir(dir);
  if (root === null) {
    errors.push({ file: show(dir), path: '', message: 'rules directory does not exist or is not readable' });
    return [];
  }
  const found: FoundRuleFile[] = root.filter((e) => isRuleFile(dir, e)).map((e) => foundAt(join(dir, e.name), null));
  const own = new Set(found.map((f) => f.destination));
  for (const p of pluginRuleFiles(pluginsDir)) {
    if (!own.has(p.destination)) found.push({ abs: p.abs, scriptId: null, destination: p.destination, plugin: true });
  }
  const byName = (f: FoundRuleFile) => `${f.destination}.json`;
  found.sort((a, b) => (byName(a) < byName(b) ? -1 : byName(a) > byName(b) ? 1 : 0));
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
      for (const f of (readDir(abs) ?? []).filter((x) => isRuleFile(abs, x))) found.push(foundAt(join(abs, f.name), e.name));
    }
  }
  return found;
}

/** A rule file as read: `parsed` is undefined when it could not be read or parsed (why is in the errors). */
export interface ReadRuleFile extends FoundRuleFile {
  /** Its path relative to the rules directory. */
  file: string;
  parsed: unknown;
}

/**
 * Every rule file under `dir` (and the plugin defaults under it, flagged `plugin`), read,
 * named relative to `dir`; problems are pushed to `errors`.
 */
export function readRuleFiles(dir: string, errors: RuleLoadError[], pluginsDir?: PluginFolders): ReadRuleFile[] {
  const show = (abs: string) => relative(dir, abs) || abs;
  return listRuleFiles(dir, show, errors, pluginsDir).map((f) => {
    const file = show(f.abs);
    return { ...f, file, parsed: readRuleFile(f.abs, file, errors) };
  });
}

const foundAt = (abs: string, scriptId: string | null): FoundRuleFile => ({ abs, scriptId, destination: basename(abs, '.json') });

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

/** The parsed JSON of one rule file, or undefined after pushing why it could not be had. */
export function readRuleFile(abs: string, file: string, errors: RuleLoadError[]): unknown {
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

/**
 * Names, sizes, mtimes and inodes of everything a load reads: enough to notice any edit,
 * new file, deletion or rename, for a few dozen stat calls.
 */
export function fingerprintOf(dir: string, pluginsDir?: PluginFolders): string {
  const parts: string[] = [];
  for (const p of pluginRuleFiles(pluginsDir)) {
    try {
      const s = statSync(p.abs);
      parts.push(`${p.abs}:${s.size}:${s.mtimeMs}:${s.ino}`);
    } catch {
      parts.push(`${p.abs}:?`);
    }
  }
  const visit = (path: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(path).sort();
    } catch {
      parts.push(`${path}:-`);
      return;
    }
    for (const name of names) {
      if (name.startsWith('.')) continue;
      const child = join(path, name);
      try {
        const s = statSync(child);
        if (s.isDirectory()) {
          if (depth < 2 && (depth > 0 || name === 'accounts')) visit(child, depth + 1);
        } else if (name.endsWith('.json')) {
          parts.push(`${child}:${s.size}:${s.mtimeMs}:${s.ino}`);
        }
      } catch {
        parts.push(`${child}:?`);
      }
    }
  };
  visit(dir, 0);
  return parts.join('\n');
}
