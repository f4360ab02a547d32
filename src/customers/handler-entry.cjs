// Entry of the custom-handler threads among the sources (handler-pool.ts). On Node 20,
// tsx's ESM hooks are not active in worker threads, so this plain CommonJS file registers
// tsx's require hook itself and requires the TypeScript module through it. That module and
// the handlers it loads must not use top-level await.
'use strict';
require('tsx/cjs');
module.exports = require('./handler-worker.ts').default;
