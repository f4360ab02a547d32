#!/usr/bin/env -S node --max-semi-space-size=8 --no-parallel-scavenge --heap-growing-percent=100
// `tracklane` executable: runs the CLI from the build in dist/ when that is newer than every
// source under src/ (../build-state.cjs), else registers tsx so the TypeScript sources run as
// they are (`serve` then says so in one line, as npm start does; other commands stay quiet,
// their output being read by scripts). The node flags are `npm start`'s: the main thread's
// young generation held at 24 MB (see src/workers/worker-options.ts), and young-generation
// collections done by the thread that allocated, without V8's helper threads, and each old
// generation collected once it has doubled since the last full collection (README,
// "Memory and node flags").
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';
import buildState from '../build-state.cjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const build = buildState.coreBuild(root);
if (build.fresh) {
  await import(pathToFileURL(join(root, buildState.BUILD_DIR, 'src/cli/main.js')).href);
} else {
  if (process.argv[2] === 'serve') process.stderr.write(buildState.sourcesWarning(build.why));
  const { register } = await import('tsx/esm/api');
  register();
  await import('./main.ts');
}
