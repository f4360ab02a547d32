// `npm run build`, and npm's `prepare` (run after `npm install` / `npm ci` in the project):
// compiles the core and the shipped plugins and custom endpoints to dist/ (src/tsconfig.build.json),
// which npm start, the worker threads and the tracklane CLI then run as long as nothing under
// src/ is newer (src/build-state.cjs). Built beside dist/ and swapped in whole, so a failed
// build leaves the previous one and a finished one holds no files of deleted sources.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { BUILD_DIR, STAMP_FILE } = require('./build-state.cjs');
const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, BUILD_DIR);
const next = `${dist}.next`;
const old = `${dist}.old`;

// Before tsc reads anything: a source saved while it runs counts as newer than the build.
const started = Date.now();
let tsc;
try {
  tsc = require.resolve('typescript/bin/tsc');
} catch {
  // An install without devDependencies (npm ci --omit=dev) has no compiler: still a working install.
  process.stderr.write(`tracklane: typescript is not installed, so ${BUILD_DIR}/ was not built; npm start will run the sources through tsx\n`);
  process.exit(0);
}
rmSync(next, { recursive: true, force: true });
const run = spawnSync(process.execPath, [tsc, '-p', join(root, 'src/tsconfig.build.json'), '--outDir', next], { stdio: 'inherit' });
if (run.status !== 0) {
  rmSync(next, { recursive: true, force: true });
  process.stderr.write(`tracklane: the build failed; ${BUILD_DIR}/ is unchanged\n`);
  process.exit(run.status ?? 1);
}
// The compiled modules import it (src/load-module.ts); it is plain CommonJS, not compiled.
copyFileSync(join(root, 'src/build-state.cjs'), join(next, 'src/build-state.cjs'));
// Compiling schemas was most of a thread's start: generate their validators (src/build-validators.mjs).
// Without them the build still runs, compiling at start as the sources do.
const validators = spawnSync(process.execPath, [join(root, 'src/build-validators.mjs'), next], { stdio: 'inherit' });
if (validators.status !== 0) process.stderr.write('tracklane: schema validators were not generated; the server compiles its schemas at start\n');
writeFileSync(join(next, STAMP_FILE), `${JSON.stringify({ started })}\n`);
rmSync(old, { recursive: true, force: true });
if (existsSync(dist)) renameSync(dist, old);
renameSync(next, dist);
rmSync(old, { recursive: true, force: true });
process.stdout.write(`tracklane: built ${BUILD_DIR}/ in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
