// `npm start`'s entry. It runs the build in dist/ (npm run build) when
// that is newer than every source under src/ (build-state.cjs): plain JavaScript, no loader.
// Otherwise (src/ edited since, or never built) it says so in one line and runs the sources:
// it registers tsx's require hook in this thread and requires the TypeScript entry through
// it, as the worker threads' .cjs entries do, instead of `--import tsx`: on Node 20 that
// flag runs tsx's ESM hooks on a module-loader thread of their own, a V8 heap of ~30 MB that
// the server would hold for its whole life. The modules this thread loads must therefore not
// use top-level await, and TypeScript files loaded at run time (plugins, custom-endpoint
// handlers) go through src/load-module.ts.
'use strict';
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');
const { BUILD_DIR, coreBuild, sourcesWarning } = require('./build-state.cjs');

const root = join(__dirname, '..');
const build = coreBuild(root);
if (build.fresh) {
  import(pathToFileURL(join(root, BUILD_DIR, 'src/index.js')).href).catch((err) => {
    process.stderr.write(`tracklane: failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
} else {
  process.stderr.write(sourcesWarning(build.why));
  require('tsx/cjs');
  require('./index.ts');
}
