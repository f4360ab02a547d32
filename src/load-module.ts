// Loads a TypeScript module at run time (a destination plugin's index.ts, a custom
// endpoint's handler.ts). From the build in dist/: its compiled copy when the build holds an
// up-to-date one, whose imports of src/ are then the very modules the core runs; otherwise
// (a folder added or edited since the build) the TypeScript file through tsx's require hook,
// registered in this thread only then. Among the sources: under either of the ways tsx runs
// the server, its ESM loader (`--import tsx`: the CLI, the tests) or only its require hook
// (npm start's src/index.cjs, the worker threads), where import() has no loader for `.ts` files.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { buildFolder, compiledCopy, projectRoot, runsCompiled } from './build-state.cjs';

const requireHere = createRequire(import.meta.url);
const COMPILED = runsCompiled(import.meta.url);
const ROOT = projectRoot(import.meta.url);
/** From the build, the one this process started from (dist may point at a newer one since). */
const BUILD = buildFolder(import.meta.url) ?? undefined;
/** False once import() has refused a `.ts` file here (this thread runs only the require hook), and from the build. */
let importLoadsTs = !COMPILED;

const versioned = (url: string, fresh: string | undefined): string => (fresh === undefined ? url : `${url}?v=${encodeURIComponent(fresh)}`);

/**
 * `fresh`: load the file anew rather than from the module cache (a custom endpoint whose
 * folder changed); the value only has to differ from the previous load's.
 */
export async function loadModule(file: string, fresh?: string): Promise<unknown> {
  if (COMPILED) {
    const built = compiledCopy(ROOT, file, BUILD);
    if (built !== null) return import(versioned(pathToFileURL(built).href, fresh));
    registerTsxRequireHook();
  }
  const url = pathToFileURL(file).href;
  // A file tsx runs as CommonJS (outside a `"type": "module"` package) sits in the require
  // cache even when import() loaded it, and the query below does not reach that cache.
  if (fresh !== undefined) delete requireHere.cache[file];
  if (importLoadsTs) {
    try {
      return await import(versioned(url, fresh));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw e;
      importLoadsTs = false;
    }
  }
  return requireHere(file);
}

/** tsx's require hook for `.ts` files, once per thread: from the build, only a folder without an up-to-date compiled copy needs it. */
function registerTsxRequireHook(): void {
  if (requireHere.extensions['.ts'] !== undefined) return;
  (requireHere('tsx/cjs/api') as { register(): unknown }).register();
}
