// Entry of the delivery thread among the sources (started by delivery-thread-host.ts). On
// Node 20, tsx's ESM hooks are not active in worker threads, so this plain CommonJS file
// registers tsx's require hook itself and requires the TypeScript module through it. That
// module and its imports (plugins included) must not use top-level await.
'use strict';
require('tsx/cjs');
require('./in-delivery-thread.ts').runInDeliveryThread();
