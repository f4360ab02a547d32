// Loads a TypeScript module at run time (a destination plugin's index.ts, a custom
// endpoint's handler.ts) under either of the ways tsx runs the server: its ESM loader
// (`--import tsx`: the CLI, the tests) or only its require hook (`npm start`'s
// src/index.cjs, the worker threads), where import() has no loader for `.ts` files.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const requireHere = createRequire(import.meta.url);
/** False once import() has refused a `.ts` file here: this thread runs only the require hook. */
let importLoadsTs = true;

/**
 * `fresh`: load the file anew rather than from the module cache (a custom endpoint whose
 * folder changed); the value only has to differ from the previous load's.
 */
export async function loadModule(file: string, fresh?: string): Promise<unknown> {
  const url = pathToFileURL(file).href;
  // A file tsx runs as CommonJS (outside a `"type": "module"` package) sits in the require
  // cache even when import() loaded it, and the query below does not reach that cache.
  if (fresh !== undefined) delete requireHere.cache[file];
  if (importLoadsTs) {
    try {
      return await import(fresh === undefined ? url : `${url}?v=${encodeURIComponent(fresh)}`);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw e;
      importLoadsTs = false;
    }
  }
  return requireHere(file);
}
