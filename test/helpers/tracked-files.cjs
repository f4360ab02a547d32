// What the repository ships under a folder (what git tracks), for the two places that keep an
// operator's additions out of `npm test`: the test files mocha runs (.mocharc.cjs, plain
// CommonJS so the config can use it) and the folders the test servers load (shipped-folders.ts).
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

/**
 * The files `npm test` runs: every test under test/, and the tests inside plugins/ and
 * customers/ as the repository ships them: a folder or test file added there counts once
 * it is `git add`ed.
 */
function testSpec(root) {
  const tracked = trackedFiles(root, ['plugins', 'customers']);
  if (tracked === null) return ['test/**/*.test.ts', 'plugins/**/*.test.ts', 'customers/**/*.test.ts'];
  return ['test/**/*.test.ts', ...tracked.filter((p) => p.endsWith('.test.ts'))];
}

module.exports = { trackedFiles, testSpec };
