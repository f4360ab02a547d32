#!/usr/bin/env -S node --max-semi-space-size=8 --no-parallel-scavenge --heap-growing-percent=100
// `tracklane` executable: registers tsx so the TypeScript sources run as they are,
// then hands over to the CLI entry. The node flags are `npm start`'s: the main thread's
// young generation held at 24 MB (see src/workers/worker-options.ts), and young-generation
// collections done by the thread that allocated, without V8's helper threads, and each old
// generation collected once it has doubled since the last full collection (README,
// "Memory and node flags").
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
