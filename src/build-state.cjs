// Which copy of the code runs: the build in dist/ (`npm run build`; dist is a link to the
// newest build under dist.builds/) when it is present and newer than every source file it
// was built from, else the
// TypeScript sources through tsx. Plain CommonJS, so npm start's entry and the CLI's can ask
// before anything is compiled or a loader is registered.
'use strict';
const { existsSync, readdirSync, readFileSync, realpathSync, statSync } = require('node:fs');
const { basename, dirname, isAbsolute, join, relative, resolve } = require('node:path');
const { fileURLToPath } = require('node:url');

/** The build's folder, under the project root: a link to the newest of BUILDS_DIR's folders. */
const BUILD_DIR = 'dist';
/** Every build kept, one folder each (src/build.mjs), so that none is rewritten while it runs. */
const BUILDS_DIR = 'dist.builds';
/** Written by the build into BUILD_DIR: `{ "started": <ms> }`, when it began reading the sources. */
const STAMP_FILE = '.build-stamp.json';

/**
 * Newest change (ms) of the TypeScript files under `dir`, tests aside. ctime, not mtime: a
 * file copied with its old mtime kept (`cp -a`) or saved by renaming still counts as new.
 */
function newestSourceChange(dir) {
  let newest = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return newest;
  }
  for (const e of entries) {
    if (e.name.startsWith('.') || e.name === 'node_modules') continue;
    const path = join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestSourceChange(path));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')) newest = Math.max(newest, statSync(path).ctimeMs);
  }
  return newest;
}

/** When the build in the folder `build` started, or null when it holds no finished build. */
function stampOf(build) {
  try {
    const started = JSON.parse(readFileSync(join(build, STAMP_FILE), 'utf8')).started;
    return typeof started === 'number' ? started : null;
  } catch {
    return null;
  }
}

/** When the build in `root`'s dist/ started, or null when there is no finished build. */
const buildStarted = (root) => stampOf(join(root, BUILD_DIR));

/**
 * The build folder of the compiled module at `url` (its import.meta.url): the build its
 * process started from, which dist may no longer point at. Null among the sources.
 */
function buildFolder(url) {
  let dir = dirname(fileURLToPath(url));
  while (!existsSync(join(dir, STAMP_FILE))) {
    if (dirname(dir) === dir) return null;
    dir = dirname(dir);
  }
  return dir;
}

/**
 * Whether dist/ may run instead of src/: `{ fresh: true }`, or why not (for the warning line).
 * @param {string} root the project root
 */
function coreBuild(root) {
  const started = buildStarted(root);
  if (started === null) return { fresh: false, why: `${BUILD_DIR}/ has no build` };
  if (newestSourceChange(join(root, 'src')) > started) return { fresh: false, why: `src/ has changed since ${BUILD_DIR}/ was built` };
  return { fresh: true };
}

/** The one line npm start (and `tracklane serve`) prints when it runs the sources instead. */
const sourcesWarning = (why) => `tracklane: ${why}; running the TypeScript sources through tsx (slower start). Run \`npm run build\` to build it.\n`;

/**
 * The compiled copy of `file` (a TypeScript file under `root`: a plugin's index.ts, an
 * endpoint's handler.ts), when the build (`build`: the running one, else dist/) holds one at
 * least as new as every TypeScript file of `file`'s folder; else null (a folder added or
 * edited after the build).
 */
function compiledCopy(root, file, build = join(root, BUILD_DIR)) {
  // A folder linked in (an operator's symlinked plugin, the tests' shipped folders) is the
  // folder it points at: compare real paths.
  const real = (p) => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  };
  const rel = relative(real(root), real(file));
  if (rel.startsWith('..') || isAbsolute(rel) || !rel.endsWith('.ts') || rel.startsWith(`${BUILD_DIR}/`) || rel.startsWith(`${BUILDS_DIR}/`)) return null;
  const out = join(build, `${rel.slice(0, -3)}.js`);
  const started = stampOf(build);
  if (started === null || !existsSync(out)) return null;
  return newestSourceChange(dirname(file)) <= started ? out : null;
}

/** Whether the module at `url` (its import.meta.url) is the build's copy rather than a source file. */
const runsCompiled = (url) => url.endsWith('.js');

/**
 * A module beside the one at `url` (its import.meta.url), by name without extension, as a
 * path in the same form: `name.js` in the build, `name.ts` among the sources. For worker files.
 */
const siblingModule = (url, name) => fileURLToPath(new URL(`./${name}${runsCompiled(url) ? '.js' : '.ts'}`, url));

/** The project root, seen from the module at `url`: src/x.ts and dist/src/x.js alike (a build's own package.json is passed over). */
function projectRoot(url) {
  const file = fileURLToPath(url);
  let dir = dirname(file);
  while (!existsSync(join(dir, 'package.json')) || dir.endsWith(`/${BUILD_DIR}`) || basename(dirname(dir)) === BUILDS_DIR) {
    if (dirname(dir) === dir) throw new Error(`no package.json above ${file}`);
    dir = dirname(dir);
  }
  return resolve(dir);
}

module.exports = { BUILD_DIR, BUILDS_DIR, STAMP_FILE, newestSourceChange, buildStarted, buildFolder, coreBuild, sourcesWarning, compiledCopy, runsCompiled, siblingModule, projectRoot };
