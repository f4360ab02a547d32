// `tracklane test FOLDER`: an outside folder's tests run with the service's own mocha and tsx,
// `tracklane/sdk`, `tracklane/sdk/testing` and chai resolving to the service's, and the command
// exits with mocha's code.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/spawn-server.ts';
import { tempDir } from '../helpers/test-server.ts';
import { testProcessEnv } from '../helpers/service-variables.ts';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `tracklane test …` from `cwd`, with its scratch folder under `tmp`. */
function tracklaneTest(args: string[], cwd: string, tmp: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(ROOT, 'src/cli/bin.mjs'), 'test', ...args], { cwd, env: testProcessEnv({ TMPDIR: tmp }), encoding: 'utf8', timeout: 120_000 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }));
  });
}

const PASSING = `import { expect } from 'chai';
import { isSuccessStatus } from 'tracklane/sdk';
import { normalizedEvent, reply } from 'tracklane/sdk/testing';

describe('an outside folder', () => {
  it('reaches the SDK and chai', () => {
    expect(isSuccessStatus(reply(204).status)).to.equal(true);
    expect(normalizedEvent({ event: { name: 'lead_created', exchange_rate: 1 }, context: { environment: 'prod' } }).products).to.deep.equal([]);
  });
});
`;

const FAILING = `import { expect } from 'chai';

describe('failures', () => {
  it('one', () => expect(1).to.equal(2));
  it('two', () => expect('a').to.equal('b'));
});
`;

describe('cli: tracklane test FOLDER', function () {
  this.timeout(120_000);

  it('runs the folder\'s tests with the service\'s mocha, tsx, SDK and chai, from any folder, and exits 0 when they pass', async () => {
    const folder = tempDir('tl-outside-tests-');
    mkdirSync(join(folder, 'nested'));
    writeFileSync(join(folder, 'nested', 'sdk.test.ts'), PASSING);
    mkdirSync(join(folder, 'node_modules', 'x'), { recursive: true });
    writeFileSync(join(folder, 'node_modules', 'x', 'ignored.test.ts'), FAILING);
    const tmp = tempDir('tl-scratch-');
    const r = await tracklaneTest([folder], tempDir('tl-elsewhere-'), tmp);
    expect(r.code, r.stdout + r.stderr).to.equal(0);
    expect(r.stdout).to.match(/1 passing/);
    expect(readdirSync(tmp).filter((f) => f.startsWith('tl-test-run-')), 'the run\'s scratch folder is removed').to.deep.equal([]);
  });

  it('exits with mocha\'s code: the number of failures', async () => {
    const folder = tempDir('tl-outside-tests-');
    writeFileSync(join(folder, 'a.test.ts'), PASSING);
    writeFileSync(join(folder, 'b.test.ts'), FAILING);
    const r = await tracklaneTest([folder], folder, tempDir('tl-scratch-'));
    expect(r.code, r.stdout + r.stderr).to.equal(2);
    expect(r.stdout).to.match(/1 passing/).and.match(/2 failing/);
    const one = await tracklaneTest(['a.test.ts'], folder, tempDir('tl-scratch-'));
    expect(one.code, 'a file runs alone').to.equal(0);
    const grep = await tracklaneTest([folder, '--grep', 'reaches'], folder, tempDir('tl-scratch-'));
    expect(grep.code, 'options after FOLDER go to mocha').to.equal(0);
  });

  it('a folder without tests, a missing folder and no folder are refused', async () => {
    const empty = tempDir('tl-no-tests-');
    const none = await tracklaneTest([empty], empty, tempDir('tl-scratch-'));
    expect(none.code).to.equal(1);
    expect(none.stderr).to.equal(`tracklane: no *.test.ts files under ${empty}\n`);
    const missing = await tracklaneTest([join(empty, 'nope')], empty, tempDir('tl-scratch-'));
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.equal(`tracklane: ${join(empty, 'nope')} does not exist\n`);
    const usage = await tracklaneTest([], empty, tempDir('tl-scratch-'));
    expect(usage.code).to.equal(2);
    expect(usage.stderr).to.match(/^tracklane: missing FOLDER\n\nUsage:\n {2}tracklane test FOLDER/);
    expect(existsSync(join(empty, 'node_modules')), 'nothing is installed into the folder').to.equal(false);
  });
});
