// The ways the docs give to run the CLI, run as written: the path docs/build.md gives scripts
// (a checkout has no node_modules/.bin/tracklane: npm links a package's bins only into the
// projects that depend on it).
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/spawn-server.ts';

function sh(script: string, cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => execFile('sh', ['-c', script], { cwd, env, encoding: 'utf8' }, (err, stdout, stderr) =>
    resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr })));
}

describe('process: the CLI paths the docs give', function () {
  this.timeout(60_000);

  it('docs/build.md: the path for scripts exists in a checkout and runs --help', async () => {
    const text = readFileSync(join(ROOT, 'docs/build.md'), 'utf8').replace(/\s*\n\s*/g, ' ');
    const path = /for scripts, run `([^`]+)`/.exec(text)?.[1];
    expect(path, 'docs/build.md names a path for scripts').to.be.a('string');
    const { code, stdout, stderr } = await sh(`${path} --help`, ROOT);
    expect(code, `${path} --help: ${stderr}`).to.equal(0);
    expect(stdout).to.contain('Commands:');
  });
});
