// Entry of the event writer thread (writer-thread.ts). On Node 20, tsx's ESM hooks are not
// active in worker threads, so this plain CommonJS file registers tsx's require hook itself
// (resolved from here, whatever the working directory or the parent's flags) and requires
// the TypeScript module through it. That module and its imports must not use top-level await.
'use strict';
require('tsx/cjs');
require('./writer-worker.ts').runWriterWorker();
