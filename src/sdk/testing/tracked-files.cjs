// What the repository ships under a folder (what git tracks), for the two places that keep an
// operator's additions out of `npm test`: the test files mocha runs (.mocharc.cjs) and the
// folders the test servers load (shipped-folders.ts). Plain CommonJS, so the mocha config can
// use it before any loader is registered; the build copies it beside the compiled modules.
'use strict';
const { execFileSync } = require('node:child_process');
const { existsSync } = require('node:fs');
const { join } = require('node:path');

/**
 * Paths relative to `root` that git tracks under `folders` and that exist, or null when `root`
 * is not the top of a git checkout (an export: then what the folders hold is what shipped).
 */
function trackedFiles(root, folders) {
  const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  let listed;
  try {
    // A prefix means the project sits inside some other repository, which tracks none of it.
    if (git('rev-parse', '--show-prefix').trim() !== '') return null;
    listed = git('ls-files', '-z', '--', ...folders);
  } catch {
    return null;
  }
  return listed.split('\0').filter((p) => p !== '' && existsSync(join(root, p)));
}

module.exports = { trackedFiles };
