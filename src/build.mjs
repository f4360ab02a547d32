// `npm run build`: compiles the core and the shipped plugins and custom endpoints into a new
// folder under dist.builds/, then points dist (a symbolic link) at it, which npm start, the
// worker threads and the tracklane CLI run as long as nothing under src/ is newer
// (src/build-state.cjs). A build never rewrites one a server may be running: each build is a
// folder of its own, and the switch is one rename of the link, so a server keeps loading the
// modules of the build it started from (Node resolves the link when it loads the entry)
// while a new one is built and swapped in; a failed build leaves the current one. The newest
// KEEP builds stay, so servers started from the previous ones keep their files until they
// are restarted. npm does not run it by itself (no `prepare`): `npx tracklane` in a checkout
// would otherwise rebuild on first use.
import { spawnSync } from 'node:child_process';
import { copyFileSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { BUILD_DIR, BUILDS_DIR, STAMP_FILE, buildStarted } = require('./build-state.cjs');
const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, BUILD_DIR);
const builds = join(root, BUILDS_DIR);
/** Builds kept: the one dist points at and the previous ones, for servers still running them. */
const KEEP = 3;

// Before tsc reads anything: a source saved while it runs counts as newer than the build.
const started = Date.now();
const id = `${started}-${process.pid}`;
const next = join(builds, `${id}.partial`);
let tsc;
try {
  tsc = require.resolve('typescript/bin/tsc');
} catch {
  // An install without devDependencies (npm ci --omit=dev) has no compiler: still a working install.
  process.stderr.write(`tracklane: typescript is not installed, so ${BUILD_DIR}/ was not built; npm start will run the sources through tsx\n`);
  process.exit(0);
}
mkdirSync(builds, { recursive: true });
const run = spawnSync(process.execPath, [tsc, '-p', join(root, 'src/tsconfig.build.json'), '--outDir', next], { stdio: 'inherit' });
if (run.status !== 0) {
  rmSync(next, { recursive: true, force: true });
  process.stderr.write(`tracklane: the build failed; ${BUILD_DIR}/ is unchanged\n`);
  process.exit(run.status ?? 1);
}
// The compiled modules import them (src/load-module.ts, src/sdk/testing/shipped-folders.ts); plain JavaScript, not compiled.
for (const file of ['src/build-state.cjs', 'src/resolve-sdk.cjs', 'src/resolve-hooks.mjs', 'src/sdk/testing/tracked-files.cjs']) {
  mkdirSync(dirname(join(next, file)), { recursive: true });
  copyFileSync(join(root, file), join(next, file));
}
// The compiled copies of the shipped plugins and endpoints import the SDK by its package name,
// as written. Node resolves that name (a package importing itself) by the nearest package.json:
// the build gets its own, the project's with `exports` naming the compiled entries, so they run
// on this build's SDK, the very modules the compiled core runs, as the sources do on theirs.
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const compiledExports = Object.fromEntries(Object.entries(pkg.exports).map(([name, file]) => [name, file.replace(/\.ts$/, '.js')]));
writeFileSync(join(next, 'package.json'), `${JSON.stringify({ name: pkg.name, version: pkg.version, private: true, type: pkg.type, exports: compiledExports }, null, 2)}\n`);
// Compiling schemas was most of a thread's start: generate their validators (src/build-validators.mjs).
// Without them the build still runs, compiling at start as the sources do.
const validators = spawnSync(process.execPath, [join(root, 'src/build-validators.mjs'), next], { stdio: 'inherit' });
if (validators.status !== 0) process.stderr.write('tracklane: schema validators were not generated; the server compiles its schemas at start\n');
writeFileSync(join(next, STAMP_FILE), `${JSON.stringify({ started })}\n`);
renameSync(next, join(builds, id));

// A dist/ folder of an earlier version of this script becomes a build like the others.
const kind = (() => {
  try {
    return lstatSync(dist).isSymbolicLink() ? 'link' : 'folder';
  } catch {
    return 'none';
  }
})();
if (kind === 'folder') renameSync(dist, join(builds, `${buildStarted(root) ?? 0}-0`));
for (const leftover of ['dist.next', 'dist.old']) rmSync(join(root, leftover), { recursive: true, force: true });
// The switch: a new link renamed over the old one, so dist always names a whole build.
const link = join(root, `${BUILD_DIR}.link-${process.pid}`);
rmSync(link, { force: true });
symlinkSync(join(BUILDS_DIR, id), link, 'dir');
renameSync(link, dist);

// Older builds beyond KEEP (by when they started), and partial ones of builds that failed.
const current = basename(readlinkSync(dist));
const finished = readdirSync(builds).filter((n) => /^\d+-\d+$/.test(n)).sort((a, b) => Number(b.split('-')[0]) - Number(a.split('-')[0]));
for (const name of finished.slice(KEEP)) if (name !== current) rmSync(join(builds, name), { recursive: true, force: true });
const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
};
for (const name of readdirSync(builds)) {
  const pid = /^\d+-(\d+)\.partial$/.exec(name)?.[1];
  if (pid !== undefined && !alive(Number(pid))) rmSync(join(builds, name), { recursive: true, force: true });
}
process.stdout.write(`tracklane: built ${BUILDS_DIR}/${id} in ${((Date.now() - started) / 1000).toFixed(1)} s; ${BUILD_DIR} points at it\n`);

