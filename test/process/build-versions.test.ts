// `npm run build` never rewrites the code a running process executes (src/build.mjs): each
// build is a folder of its own under dist.builds/ and dist is a link switched by one rename,
// so a process started from one build keeps loading that build's modules while the next is
// built and swapped in. Run on a project of two small modules (the build script, its tsconfig
// and the project's node_modules, as in the checkout) so that each build takes a second.
import { expect } from 'chai';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyProject } from '../helpers/project-copy.ts';
import { waitFor } from '../helpers/test-server.ts';

const BUILD_FILES = ['package.json', 'tsconfig.json', 'src/tsconfig.build.json', 'src/build.mjs', 'src/build-state.cjs', 'src/build-validators.mjs', 'src/resolve-sdk.cjs', 'src/resolve-hooks.mjs', 'src/sdk/testing/tracked-files.cjs'];

function build(dir: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => execFile(process.execPath, ['src/build.mjs'], { cwd: dir, encoding: 'utf8' }, (err, stdout, stderr) =>
    resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, output: stdout + stderr })));
}

describe('process: a build never rewrites the code a running process executes', function () {
  this.timeout(120_000);
  let dir: string;
  before(() => {
    dir = copyProject('tl-build-versions-', BUILD_FILES);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a process started from one build keeps loading its modules after the next build; old builds are pruned', async () => {
    // a.ts loads b.ts only when asked, as the server loads its worker threads and handlers later on.
    writeFileSync(join(dir, 'src/a.ts'), "export async function later(): Promise<number> {\n  return (await import('./b.ts')).value;\n}\n");
    writeFileSync(join(dir, 'src/b.ts'), 'export const value: number = 1;\n');
    const first = await build(dir);
    expect(first.code, first.output).to.equal(0);
    expect(lstatSync(join(dir, 'dist')).isSymbolicLink(), 'dist is a link to the build').to.equal(true);
    const firstBuild = realpathSync(join(dir, 'dist'));

    const child = spawn(process.execPath, ['--input-type=module', '-e', `
      const { later } = await import(${JSON.stringify(join(dir, 'dist/src/a.js'))});
      process.stdout.write('started\\n');
      process.stdin.once('data', async () => { process.stdout.write(String(await later()) + '\\n'); process.exit(0); });
    `], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      expect(await waitFor(() => out.includes('started\n'), 20_000), 'the process started from the first build').to.equal(true);

      writeFileSync(join(dir, 'src/b.ts'), 'export const value: number = 2;\n');
      const second = await build(dir);
      expect(second.code, second.output).to.equal(0);
      expect(realpathSync(join(dir, 'dist')), 'dist points at the new build').to.not.equal(firstBuild);
      expect(readFileSync(join(firstBuild, 'src/b.js'), 'utf8'), 'the first build is untouched').to.match(/value = 1/);

      const exited = once(child, 'exit');
      child.stdin.write('go\n');
      await exited;
      expect(out, 'the running process loaded b from the build it started from').to.equal('started\n1\n');
    } finally {
      child.kill('SIGKILL');
    }
    const fresh = await import(join(dir, 'dist/src/b.js'));
    expect(fresh.value, 'a process started now runs the new build').to.equal(2);

    // Builds past the newest three are removed; the one dist points at always stays.
    for (let i = 0; i < 2; i++) expect((await build(dir)).code).to.equal(0);
    const kept = readdirSync(join(dir, 'dist.builds'));
    expect(kept).to.have.length(3);
    expect(existsSync(firstBuild), 'the oldest build is pruned').to.equal(false);
    expect(kept).to.include(realpathSync(join(dir, 'dist')).split('/').pop());
  });
});
