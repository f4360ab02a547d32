// `tracklane test FOLDER [mocha options]`: runs the tests of a plugin or custom endpoint folder
// kept anywhere (an operator's own repository) with this service's own mocha and tsx, so the
// folder needs no node_modules of its own: `tracklane/sdk` and `tracklane/sdk/testing` resolve to
// this package, as does any other package the folder's own node_modules lacks (chai, say;
// src/resolve-hooks.mjs). Exits with mocha's code. The run gets a scratch folder of its own
// (TMPDIR), removed when it ends; the servers the harness starts each get a fresh database and
// only the settings a test gives them, never the service's own.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { constants, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { projectRoot } from '../build-state.cjs';
import { CliError, UsageError, shownPath } from './output.ts';
import { usageFor } from './usage.ts';

const ROOT = projectRoot(import.meta.url);
const TEST_FILE = /\.test\.(ts|mts|cts|js|mjs|cjs)$/;

/** The test files of `target`: itself when it is one, else every `*.test.ts` (and .js) under it, dot folders and node_modules aside, sorted. */
export function testFilesOf(target: string): string[] {
  if (statSync(target).isFile()) return [target];
  return readdirSync(target, { recursive: true, encoding: 'utf8' })
    .filter((p) => TEST_FILE.test(p) && !p.split('/').some((seg) => seg.startsWith('.') || seg === 'node_modules'))
    .map((p) => join(target, p))
    .sort();
}

/** The node arguments that run mocha on `files` with tsx and the SDK's resolution (exported for the tests). */
export function mochaArgs(files: readonly string[], extra: readonly string[]): string[] {
  const require = createRequire(import.meta.url);
  let mocha: string;
  try {
    mocha = require.resolve('mocha/bin/mocha.js');
  } catch {
    throw new CliError('tracklane test needs mocha, a development dependency: install the project with them (npm ci, without --omit=dev)');
  }
  return [
    '--import', pathToFileURL(require.resolve('tsx')).href,
    '--import', pathToFileURL(join(ROOT, 'src/register-hooks.mjs')).href,
    mocha, '--no-config', '--timeout', '30000', '--exit', ...extra, ...files,
  ];
}

export async function runTestFolder(args: readonly string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(usageFor('test'));
    return 0;
  }
  const [folder, ...extra] = args;
  if (folder === undefined || folder.startsWith('-')) throw new UsageError('missing FOLDER', ['test']);
  const target = resolve(process.cwd(), folder);
  if (!existsSync(target)) throw new CliError(`${folder} does not exist`);
  const files = testFilesOf(target);
  if (files.length === 0) throw new CliError(`no *.test.ts files under ${shownPath(target)}`);
  const scratch = mkdtempSync(join(tmpdir(), 'tl-test-run-'));
  const env = { ...process.env, TMPDIR: scratch, TMP: scratch, TEMP: scratch };
  try {
    const child = spawn(process.execPath, mochaArgs(files, extra), { cwd: statSync(target).isFile() ? resolve(target, '..') : target, env, stdio: 'inherit' });
    return await new Promise<number>((done, fail) => {
      child.once('error', fail);
      child.once('exit', (code, signal) => done(code ?? 128 + (signal ? constants.signals[signal] : 0)));
    });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
