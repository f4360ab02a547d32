// `npm run build`, and npm's `prepare` (run after `npm install` / `npm ci` in the project):
// compiles the core and the shipped plugins and custom endpoints to dist/ (src/tsconfig.build.json),
// which npm start, the worker threads and the tracklane CLI then run as long as nothing under
// src/ is newer (src/build-state.cjs). Built beside dist/ and swapped in whole, so a failed
// build leaves the previous one and a finished one holds no files of deleted sources.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
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
// The compiled modules import them (src/load-module.ts); plain JavaScript, not compiled.
for (const file of ['src/build-state.cjs', 'src/sdk/resolve-sdk.cjs', 'src/sdk/resolve-hooks.mjs']) copyFileSync(join(root, file), join(next, file));
// The shipped plugins and endpoints import the SDK by its package name, which Node resolves
// (package.json "exports") to the TypeScript sources: in their compiled copies it names the
// compiled SDK instead, so they run on the very modules the compiled core runs.
for (const folder of ['plugins', 'customers']) pointAtCompiledSdk(join(next, folder), join(next, 'src/sdk'));
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

/** In every .js file under `dir`, `'tracklane/sdk'` and `'tracklane/sdk/testing'` in import and export statements become relative paths into `sdkDir`. */
function pointAtCompiledSdk(dir, sdkDir) {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (!name.endsWith('.js')) continue;
    const file = join(dir, name);
    const text = readFileSync(file, 'utf8');
    const to = (entry) => {
      const rel = relative(dirname(file), join(sdkDir, `${entry}.js`)).split(sep).join('/');
      return rel.startsWith('.') ? rel : `./${rel}`;
    };
    const out = text.replace(/(\bfrom\s*|\bimport\s*\(?\s*)(['"])tracklane\/sdk(\/testing)?\2/g, (_, lead, q, testing) => `${lead}${q}${to(testing ? 'testing' : 'index')}${q}`);
    if (out !== text) writeFileSync(file, out);
  }
}
