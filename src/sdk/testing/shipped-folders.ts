// rules/, customers/ and plugins/ as the repository ships them (what git tracks), not as an
// operator's checkout holds them: the test servers load these (as the shipped folders, before
// any folder a test lists in PLUGINS_DIR / CUSTOMERS_DIR), so a customer folder, plugin or rule
// file an operator adds (tracklane customers new, a rules/ga4.json) changes no test.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { projectRoot } from '../../build-state.cjs';
import { loadConfig, type Config } from '../../config.ts';
import { trackedFiles } from './tracked-files.cjs';

/** The tracklane package's folder (its package.json's). */
export const PROJECT_ROOT = projectRoot(import.meta.url);

export interface ShippedFolders {
  rulesDir: string;
  customersDir: string;
  pluginsDir: string;
}

let cached: ShippedFolders | undefined;

/**
 * The three folders of this checkout, worked out once per process (shippedFoldersOf) and
 * their temp copies removed when it exits.
 */
export function shippedFolders(): ShippedFolders {
  if (cached) return cached;
  const { remove, ...folders } = shippedFoldersOf(PROJECT_ROOT);
  process.once('exit', remove);
  return (cached = folders);
}

/**
 * A folder holding nothing but tracked entries is itself (so in a clean clone, as CI has,
 * nothing changes); one holding more is replaced by a temp folder with only the tracked part:
 * plugin and customer folders linked (their imports still resolve from where they are), rule
 * files copied. A new plugin or customer folder counts once it is `git add`ed. Outside a git
 * checkout (an export), what the folders hold is what shipped. `remove` deletes the temp folders.
 */
export function shippedFoldersOf(root: string): ShippedFolders & { remove(): void } {
  const listed = trackedFiles(root, ['rules', 'customers', 'plugins']);
  const tracked = listed === null ? null : new Set(listed.map((p) => join(root, p)));
  const temps: string[] = [];
  const temp = (name: string) => {
    const dir = mkdtempSync(join(tmpdir(), `tl-shipped-${name}-`));
    temps.push(dir);
    return dir;
  };
  const remove = () => temps.forEach((d) => rmSync(d, { recursive: true, force: true }));
  if (tracked === null) return { rulesDir: join(root, 'rules'), customersDir: join(root, 'customers'), pluginsDir: join(root, 'plugins'), remove };
  return {
    rulesDir: shippedFiles(root, 'rules', tracked, temp),
    customersDir: shippedSubfolders(root, 'customers', tracked, temp),
    pluginsDir: shippedSubfolders(root, 'plugins', tracked, temp),
    remove,
  };
}

/**
 * loadConfig for a test server: RULES_DIR the shipped rules unless `env` names one, and the
 * shipped plugins and customers as the folders every server loads first (then whatever
 * PLUGINS_DIR / CUSTOMERS_DIR in `env` list).
 */
export function configOverShippedFolders(env: Record<string, string>): Config {
  const f = shippedFolders();
  return loadConfig({ RULES_DIR: f.rulesDir, ...env }, process.cwd(), { plugins: f.pluginsDir, customers: f.customersDir });
}

/**
 * The folders as loadConfig's variables, for the environment of a process a test starts; the
 * shipped plugins and customers folders it loads first are the package's (with what an operator
 * added there), these are loaded after them.
 */
export function shippedFolderEnv(): { RULES_DIR: string; CUSTOMERS_DIR: string; PLUGINS_DIR: string } {
  const f = shippedFolders();
  return { RULES_DIR: f.rulesDir, CUSTOMERS_DIR: f.customersDir, PLUGINS_DIR: f.pluginsDir };
}

/** The subfolder names the loaders see in `dir` (dot folders skipped), sorted. */
export function subfolderNames(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => !f.startsWith('.') && statSync(join(dir, f)).isDirectory()).sort();
}

/** `root/name` when each of its subfolders holds a tracked file, else a temp folder linking only those that do. */
function shippedSubfolders(root: string, name: string, tracked: Set<string>, temp: (name: string) => string): string {
  const dir = join(root, name);
  const holdsTracked = new Set([...tracked].map((f) => relative(dir, f).split('/')).filter((p) => p.length > 1 && p[0] !== '..').map((p) => p[0]));
  const present = subfolderNames(dir);
  if (present.every((name) => holdsTracked.has(name))) return dir;
  const out = temp(name);
  for (const sub of present.filter((n) => holdsTracked.has(n))) symlinkSync(join(dir, sub), join(out, sub), 'dir');
  return out;
}

/** `root/name` when every file under it is tracked, else a temp copy of only the tracked ones. */
function shippedFiles(root: string, name: string, tracked: Set<string>, temp: (name: string) => string): string {
  const dir = join(root, name);
  const present = filesUnder(dir);
  if (present.every((f) => tracked.has(f))) return dir;
  const out = temp(name);
  for (const file of present.filter((f) => tracked.has(f))) {
    const to = join(out, relative(dir, file));
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(file, to);
  }
  return out;
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((p) => !p.split('/').some((seg) => seg.startsWith('.')))
    .map((p) => join(dir, p))
    .filter((p) => statSync(p).isFile());
}
