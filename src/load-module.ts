// Loads a TypeScript module at run time (a destination plugin's index.ts, a custom
// endpoint's handler.ts). From the build in dist/: its compiled copy when the build holds an
// up-to-date one, whose imports of `tracklane/sdk`, left as written, Node resolves to the
// build's compiled SDK (the build's own package.json, src/build.mjs): the very modules the core
// runs. Otherwise (a folder added or edited since the build) the TypeScript file through
// tsx's require hook, registered in this thread only then. Among the sources: under either of
// the ways tsx runs the server, its ESM loader (`--import tsx`: the CLI, the tests) or only its
// require hook (npm start's src/index.cjs, the worker threads), where import() has no loader
// for `.ts` files. A folder outside this package (PLUGINS_DIR, CUSTOMERS_DIR elsewhere) always
// loads through the require hook, where `tracklane/sdk` resolves to this package
// (src/resolve-sdk.cjs): Node's own resolution of that name (package.json `exports`) reaches
// only files inside the package.
import { createRequire } from 'node:module';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildFolder, compiledCopy, projectRoot, runsCompiled } from './build-state.cjs';
import { requireResolution, sdkTargets } from './resolve-sdk.cjs';

const requireHere = createRequire(import.meta.url);
const COMPILED = runsCompiled(import.meta.url);
const ROOT = projectRoot(import.meta.url);
/** From the build, the one this process started from (dist may point at a newer one since). */
const BUILD = buildFolder(import.meta.url) ?? undefined;
/** False once import() has refused a `.ts` file here (this thread runs only the require hook), and from the build. */
let importLoadsTs = !COMPILED;

const versioned = (url: string, fresh: string | undefined): string => (fresh === undefined ? url : `${url}?v=${encodeURIComponent(fresh)}`);

const realPath = (file: string): string => {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
};

/** Whether `file` (its real path: a linked folder is where it points) lies inside this package. */
export function insidePackage(file: string): boolean {
  const rel = relative(realPath(ROOT), realPath(file));
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

/**
 * `fresh`: load the file anew rather than from the module cache (a custom endpoint whose
 * folder changed); the value only has to differ from the previous load's.
 */
export async function loadModule(file: string, fresh?: string): Promise<unknown> {
  if (COMPILED) {
    const built = compiledCopy(ROOT, file, BUILD);
    if (built !== null) return import(versioned(pathToFileURL(built).href, fresh));
  }
  if (importLoadsTs && insidePackage(file)) {
    try {
      // A file tsx runs as CommonJS (outside a `"type": "module"` package) sits in the require
      // cache even when import() loaded it, and the query below does not reach that cache.
      if (fresh !== undefined) delete requireHere.cache[realPath(file)];
      return await import(versioned(pathToFileURL(file).href, fresh));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw e;
      importLoadsTs = false;
    }
  }
  return requireTs(file, fresh);
}

/** `file` through tsx's require hook, `tracklane/sdk` resolving to this package whatever folder it is in. */
function requireTs(file: string, fresh: string | undefined): unknown {
  registerTsxRequireHook();
  requireResolution(ROOT, sdkTargets(ROOT, COMPILED ? (BUILD ?? null) : null));
  if (fresh !== undefined) delete requireHere.cache[realPath(file)];
  return requireHere(file);
}

/** tsx's require hook for `.ts` files, once per thread: from the build, only a folder without an up-to-date compiled copy needs it. */
function registerTsxRequireHook(): void {
  if (requireHere.extensions['.ts'] !== undefined) return;
  (requireHere('tsx/cjs/api') as { register(): unknown }).register();
}

/** Whether the nearest package.json above `dir` declares ES modules, as plugins and handlers need. */
export function isEsmScope(dir: string): boolean {
  for (let d = dir; ; d = dirname(d)) {
    const pkg = join(d, 'package.json');
    if (existsSync(pkg)) {
      try {
        return (JSON.parse(readFileSync(pkg, 'utf8')) as { type?: unknown }).type === 'module';
      } catch {
        return false;
      }
    }
    if (dirname(d) === d) return false;
  }
}
