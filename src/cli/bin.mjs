#!/usr/bin/env -S node --max-semi-space-size=4
// `tracklane` executable: registers tsx so the TypeScript sources run as they are,
// then hands over to the CLI entry. The node flag keeps the main thread's young
// generation at 12 MB, as `npm start` does (see src/workers/worker-options.ts).
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
