// The ways the docs give to run the CLI, run as written: the path docs/build.md gives scripts
// (a checkout has no node_modules/.bin/tracklane: npm links a package's bins only into the
// projects that depend on it), and the README's commands for running it from outside the
// project, where a bare `npx tracklane` asks the public registry for someone else's package.
// npm is pointed at a registry that answers nothing and a fresh cache: a documented command
// that reached for the registry would fail.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/spawn-server.ts';
import { tempDir } from '../helpers/test-server.ts';
import { freePort } from '../helpers/free-port.ts';
import { shellBlock } from './readme-text.ts';

function sh(script: string, cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => execFile('sh', ['-c', script], { cwd, env, encoding: 'utf8' }, (err, stdout, stderr) =>
    resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr })));
}

describe('process: the CLI paths the docs give', function () {
  this.timeout(120_000);

  it('docs/build.md: the path for scripts exists in a checkout and runs --help', async () => {
    const text = readFileSync(join(ROOT, 'docs/build.md'), 'utf8').replace(/\s*\n\s*/g, ' ');
    const path = /for scripts, run `([^`]+)`/.exec(text)?.[1];
    expect(path, 'docs/build.md names a path for scripts').to.be.a('string');
    const { code, stdout, stderr } = await sh(`${path} --help`, ROOT);
    expect(code, `${path} --help: ${stderr}`).to.equal(0);
    expect(stdout).to.contain('Commands:');
  });

  it('README: from another folder, the documented npx --prefix and the direct path run the project\'s CLI, with no registry', async () => {
    const elsewhere = tempDir('tl-elsewhere-');
    const dataDir = tempDir('tl-elsewhere-data-');
    // No registry answers, npm's cache is empty, the store is a temp one.
    const env = { ...process.env, DATA_DIR: dataDir, npm_config_registry: `http://127.0.0.1:${await freePort()}/`, npm_config_cache: tempDir('tl-npm-cache-'), npm_config_update_notifier: 'false', npm_config_fetch_retries: '0' };
    expect((await sh(`${join(ROOT, 'src/cli/bin.mjs')} migrate`, elsewhere, env)).code).to.equal(0);
    const lines = shellBlock(readFileSync(join(ROOT, 'README.md'), 'utf8'), 'Operator CLI', '# from another folder').split('\n').filter((l) => l.trim() !== '');
    expect(lines.map((l) => l.split(' ')[0])).to.deep.equal(['npx', '/opt/tracklane/src/cli/bin.mjs']);
    for (const line of lines) {
      const { code, stderr } = await sh(line.replaceAll('/opt/tracklane', ROOT), elsewhere, env);
      expect(code, `${line}: ${stderr}`).to.equal(0);
      expect(stderr, line).to.contain(join(dataDir, 'tracklane.db'));
    }
    // What the README warns of: a bare npx tracklane out there goes to the registry.
    const bare = await sh('npx tracklane --version', elsewhere, env);
    expect(bare.code).to.not.equal(0);
    expect(bare.stderr).to.match(/ECONNREFUSED|request to http:\/\/127\.0\.0\.1/);
  });
});
