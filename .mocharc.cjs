// Mocha's settings. The whole suite's files are the default only: a file named on the
// command line (`npx mocha test/admin/admin-gate.test.ts`) runs alone, where a `spec` in
// the config would be merged with it and run everything.
const named = process.argv.slice(2).some((a) => /\.test\.ts$/.test(a) || a === '--spec');
// The tests in plugins/ and customers/ are those the repository tracks: a customer folder or
// plugin an operator adds is not run until it is `git add`ed (README, "Tests and benchmarks").
const { trackedFiles } = require('./src/sdk/testing/tracked-files.cjs');

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
module.exports = {
  'node-option': ['import=tsx'],
  // The root hook: no operator setting (.env, environment) reaches a test, and the run's
  // scratch folders and databases are removed when it ends.
  require: ['test/helpers/hermetic.ts'],
  ...(named ? {} : { spec: testSpec(__dirname) }),
  timeout: 20000,
  exit: true,
};
