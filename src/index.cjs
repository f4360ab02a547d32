// `npm start`'s entry. It registers tsx's require hook in this thread and requires the
// TypeScript entry through it, as the worker threads' entries do, instead of
// `--import tsx`: on Node 20 that flag runs tsx's ESM hooks on a module-loader thread of
// their own, a V8 heap of ~30 MB that the server would hold for its whole life. The
// modules this thread loads must therefore not use top-level await, and TypeScript files
// loaded at run time (plugins, custom-endpoint handlers) go through src/load-module.ts.
'use strict';
require('tsx/cjs');
require('./index.ts');
