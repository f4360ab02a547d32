// `npx tracklane` in a checkout, the first time (an empty npm cache): npx installs the project
// folder into its cache as a link and runs its lifecycle scripts. The project has no
// `prepare` (nor install scripts), so that first run builds nothing: it must not rewrite dist/,
// which a server in the same folder may be running (it took 14–20 s and rebuilt dist/ in place).
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyProject } from '../helpers/project-copy.ts';
import { tempDir } from '../helpers/test-server.ts';

describe('process: the first npx tracklane in a checkout', function () {
  this.timeout(180_000);
  let dir: string;
  let cache: string;
  before(() => {
    dir = copyProject('tl-npx-');
    cache = tempDir('tl-npm-cache-');
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(cache, { recursive: true, force: true });
  });

  it('runs the CLI without building: dist/ stays as it was', async () => {
    // A build as an earlier version left it (a folder), older than the sources: the CLI runs the sources.
    mkdirSync(join(dir, 'dist'));
    writeFileSync(join(dir, 'dist/.build-stamp.json'), '{"started":0}\n');
    writeFileSync(join(dir, 'dist/marker'), 'left by the test\n');
    const before = statSync(join(dir, 'dist'));
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string; scripts: Record<string, string> };
    expect(Object.keys(pkg.scripts), 'no script npm runs by itself on install').to.not.include.members(['prepare', 'preinstall', 'install', 'postinstall']);

    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile('npx', ['tracklane', '--version'], {
        cwd: dir, encoding: 'utf8',
        env: { ...process.env, npm_config_cache: cache, npm_config_update_notifier: 'false' },
      }, (err, out, errOut) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout: out, stderr: errOut })));
    expect(code, stderr).to.equal(0);
    expect(stdout.trim()).to.equal(pkg.version);
    const after = statSync(join(dir, 'dist'));
    expect([after.ino, after.mtimeMs], 'dist/ is the same folder, unchanged').to.deep.equal([before.ino, before.mtimeMs]);
    expect(readFileSync(join(dir, 'dist/marker'), 'utf8')).to.equal('left by the test\n');
    expect(existsSync(join(dir, 'dist.builds')), 'no build ran').to.equal(false);
  });
});
