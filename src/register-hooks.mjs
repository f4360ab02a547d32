// `node --import …/register-hooks.mjs`: registers ./resolve-hooks.mjs (module.register) in this
// process, mapping `tracklane/sdk` to this package's TypeScript sources. `tracklane test`
// (src/cli/test-folder.ts) starts mocha with it, after tsx's own hooks.
import { createRequire, register } from 'node:module';

const require = createRequire(import.meta.url);
const { projectRoot } = require('./build-state.cjs');
const { requireResolution, sdkTargets } = require('./resolve-sdk.cjs');

const root = projectRoot(import.meta.url);
const targets = sdkTargets(root, null);
register('./resolve-hooks.mjs', import.meta.url, { data: { root, targets } });
// Files the tests load through require (a plugin folder outside the package, loaded by the harness) resolve the same way.
requireResolution(root, targets);
