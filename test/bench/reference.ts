// A reference build for the benches: `npm run bench -- --ref <commit>` (or BENCH_REF=<commit>),
// and the same for `npm run bench:scale`. The commit is checked out beside this tree (a git
// worktree in a temporary folder, removed at the end), given this tree's node_modules when its
// package-lock.json is the same (else `npm ci --prefer-offline` there), and built when it has
// a build script. Each measured figure then runs alternately on this tree and on the reference
// (ABAB…: BENCH_REF_PAIRS pairs, default 2), and is printed as a ratio to the reference beside
// its ratio to bare Koa: ratios to the reference are what a change is judged by, since the
// machine's speed and bare Koa's own cost drift between hours (docs/performance.md).
// What each side's code must do in-process (accounts, a stored backlog) runs in a child process
// on that side's own modules (side-setup.ts), so a reference with an older schema sets up its
// own store.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The root of this tree. */
export const CURRENT_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

export interface BenchOptions {
  /** The reference commit (any ref git can resolve), or null for a run of this tree alone. */
  ref: string | null;
  /** Where `--json` writes the figures, or null. */
  json: string | null;
  /** ABAB pairs per figure against the reference. */
  pairs: number;
}

/** `--ref X`, `--ref=X` or BENCH_REF; `--json FILE`; BENCH_REF_PAIRS (default 2). Throws on what it cannot use. */
export function benchOptions(argv: readonly string[], env: NodeJS.ProcessEnv): BenchOptions {
  let ref: string | null = env.BENCH_REF?.trim() || null;
  let json: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = (name: string) => {
      const v = a.startsWith(`${name}=`) ? a.slice(name.length + 1) : argv[++i];
      if (v === undefined || v === '' || v.startsWith('--')) throw new Error(`${name} needs a value`);
      return v;
    };
    if (a === '--ref' || a.startsWith('--ref=')) ref = value('--ref');
    else if (a === '--json' || a.startsWith('--json=')) json = value('--json');
    else throw new Error(`unknown argument ${a} (the benches take --ref <commit> and --json <file>)`);
  }
  const pairs = Number(env.BENCH_REF_PAIRS ?? 2);
  if (!Number.isInteger(pairs) || pairs < 1) throw new Error(`BENCH_REF_PAIRS must be a whole number ≥ 1, got ${env.BENCH_REF_PAIRS}`);
  return { ref, json, pairs };
}

export type SideName = 'current' | 'reference';

/** The order the figures run in against a reference: current, reference, current, reference, … */
export function alternation(pairs: number): { pair: number; side: SideName }[] {
  return Array.from({ length: pairs }, (_, pair) => [{ pair, side: 'current' as const }, { pair, side: 'reference' as const }]).flat();
}

/** One checkout the benches run: its folder, what commit it is, and how `npm start` starts its server there. */
export interface Side {
  name: SideName;
  root: string;
  /** Short commit and, for this tree, whether it has changes not committed. */
  label: string;
  /** The node arguments of its package.json start script (its own flags, `src/index.cjs`). */
  serverArgs: readonly string[];
}

/** The node arguments of `root`'s `npm start` (its start script without `exec node`). */
export function serverArgsOf(root: string): string[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const [node, ...args] = pkg.scripts.start.replace(/^exec\s+/, '').split(/\s+/);
  if (node !== 'node' || args[args.length - 1] !== 'src/index.cjs') throw new Error(`unexpected start script in ${root}: ${pkg.scripts.start}`);
  return args;
}

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

export function currentSide(root = CURRENT_ROOT): Side {
  const dirty = git(root, 'status', '--porcelain', '--untracked-files=no') !== '';
  return { name: 'current', root, label: `${git(root, 'rev-parse', '--short', 'HEAD')}${dirty ? ' + uncommitted changes' : ''}`, serverArgs: serverArgsOf(root) };
}

export interface Reference extends Side {
  commit: string;
  /** `linked`: this tree's node_modules (same package-lock.json); `installed`: npm ci there. */
  nodeModules: 'linked' | 'installed';
  /** Whether it was built (it has a build script), so its server runs the build as `npm start` would. */
  built: boolean;
  /** Removes the checkout. */
  close(): void;
}

export interface PrepareOptions {
  /** The tree the reference is checked out beside (default this one). */
  root?: string;
  /** Build it when it has a build script (default true; tests skip it). */
  build?: boolean;
  /** Installs dependencies in `dir` when the lock files differ (default `npm ci --prefer-offline`). */
  install?: (dir: string) => void;
  log?: (line: string) => void;
}

/**
 * Checks `ref` out into a temporary git worktree, with dependencies and, when it has a build
 * script, its build. The caller must close() it (the worktree is removed, not left behind).
 */
export function prepareReference(ref: string, opts: PrepareOptions = {}): Reference {
  const root = opts.root ?? CURRENT_ROOT;
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  let commit: string;
  try {
    commit = git(root, 'rev-parse', '--verify', '--quiet', `${ref}^{commit}`);
  } catch {
    throw new Error(`--ref ${ref}: not a commit in ${root}`);
  }
  const dir = mkdtempSync(join(tmpdir(), `tl-ref-${commit.slice(0, 7)}-`));
  git(root, 'worktree', 'add', '--detach', '--quiet', dir, commit);
  const close = () => {
    try {
      git(root, 'worktree', 'remove', '--force', dir);
    } catch {
      rmSync(dir, { recursive: true, force: true });
      try {
        git(root, 'worktree', 'prune');
      } catch { /* nothing to prune */ }
    }
  };
  try {
    const lock = (at: string) => (existsSync(join(at, 'package-lock.json')) ? readFileSync(join(at, 'package-lock.json'), 'utf8') : null);
    let nodeModules: Reference['nodeModules'];
    if (lock(root) !== null && lock(root) === lock(dir) && existsSync(join(root, 'node_modules'))) {
      symlinkSync(realpathSync(join(root, 'node_modules')), join(dir, 'node_modules'), 'dir');
      nodeModules = 'linked';
    } else {
      log(`reference ${commit.slice(0, 7)}: its package-lock.json differs from this tree's: npm ci --prefer-offline`);
      (opts.install ?? ((d: string) => execFileSync('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: d, stdio: 'inherit' })))(dir);
      nodeModules = 'installed';
    }
    const scripts = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};
    const built = (opts.build ?? true) && scripts.build !== undefined;
    if (built) {
      log(`reference ${commit.slice(0, 7)}: npm run build`);
      execFileSync('npm', ['run', '--silent', 'build'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
    }
    return { name: 'reference', root: dir, commit, label: commit.slice(0, 7), serverArgs: serverArgsOf(dir), nodeModules, built, close };
  } catch (err) {
    close();
    throw err;
  }
}

/** What side-setup.ts does on a side's own code. */
export type SetupTask =
  | { task: 'accounts'; env: NodeJS.ProcessEnv; accounts: { name: string; doubles?: Record<string, string>; country?: string }[] }
  | { task: 'backlog'; env: NodeJS.ProcessEnv; scriptId: string; events: number };

/** Runs `task` in a child process on `side`'s modules (side-setup.ts) and resolves with what it prints. */
export function sideSetup<T>(side: Side, task: SetupTask): Promise<T> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', join(CURRENT_ROOT, 'test/bench/side-setup.ts'), side.root], {
    cwd: CURRENT_ROOT, env: { ...process.env, ...task.env }, stdio: ['pipe', 'pipe', 'inherit'],
  });
  child.stdin!.end(JSON.stringify(task));
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d));
  return new Promise((res, rej) => {
    child.once('exit', (code) => {
      if (code !== 0) return rej(new Error(`setting up ${side.name} (${side.label}) failed (${task.task}, exit ${code})`));
      try {
        res(JSON.parse(out) as T);
      } catch {
        rej(new Error(`setting up ${side.name} (${side.label}): unreadable answer ${out.slice(0, 200)}`));
      }
    });
  });
}

/** One figure measured on both sides, pair by pair (lists in alternation order), with bare Koa's matching figure before each run where there is one. */
export interface Compared {
  figure: string;
  unit: string;
  current: number[];
  reference: number[];
  bareCurrent?: number[];
  bareReference?: number[];
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Each pair's current ÷ reference, and their median. */
export function ratios(c: Pick<Compared, 'current' | 'reference'>): { each: number[]; median: number } {
  const each = c.current.map((v, i) => v / c.reference[i]);
  return { each, median: median(each) };
}

/** The markdown table: each figure's medians, its ratio to the reference (median of the pairs' ratios, and each), and each side's ratio to bare Koa. */
export function comparisonTable(rows: readonly Compared[], sides: { current: string; reference: string }): string {
  const fmt = (n: number) => (Math.abs(n) >= 100 ? String(Math.round(n)) : n.toFixed(Math.abs(n) >= 10 ? 1 : 2));
  const times = (x: number) => `${x.toFixed(x >= 10 ? 1 : 2)}×`;
  const bare = (values: number[], bareValues?: number[]) => (bareValues === undefined ? 'n/a' : times(median(values.map((v, i) => v / bareValues[i]))));
  const lines = [
    `| figure | current (${sides.current}) | reference (${sides.reference}) | ÷ reference (median; each pair) | current ÷ bare Koa | reference ÷ bare Koa |`,
    '|---|---:|---:|---|---:|---:|',
  ];
  for (const r of rows) {
    const q = ratios(r);
    lines.push(`| ${r.figure} (${r.unit}) | ${fmt(median(r.current))} | ${fmt(median(r.reference))} | **${q.median.toFixed(2)}** (${q.each.map((x) => x.toFixed(2)).join(', ')}) | ` +
      `${bare(r.current, r.bareCurrent)} | ${bare(r.reference, r.bareReference)} |`);
  }
  return lines.join('\n');
}
