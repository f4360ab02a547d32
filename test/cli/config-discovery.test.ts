// The CLI finds the service's settings, and never a new, empty store: it reads the project
// folder's .env (or ENV_FILE) and resolves DATA_DIR from the project folder whatever folder
// it is typed in, and every command but `migrate` refuses a missing store, saying where it
// looked and how the settings were found, instead of creating one. Runs the real CLI of a
// copy of the project, so the project's .env is the copy's.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyProject } from '../helpers/project-copy.ts';
import { tempDir } from '../helpers/test-server.ts';
import { expectFailure, type CliResult } from './run-cli.ts';

/** An operator's shell: no tracklane settings inherited from whoever runs the tests. */
function shellEnv(more: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of ['PATH', 'HOME', 'LANG', 'TMPDIR']) if (process.env[k] !== undefined) env[k] = process.env[k]!;
  return { ...env, ...more };
}

describe('cli: finding the service\'s settings and store', function () {
  this.timeout(60_000);
  let project: string;
  let elsewhere: string;
  const cli = (cwd: string, args: string[], env = shellEnv()) => new Promise<CliResult>((resolve) => {
    execFile(process.execPath, [join(project, 'src/cli/bin.mjs'), ...args], { cwd, env, encoding: 'utf8' }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }));
  });

  before(() => {
    project = copyProject('tl-cliconf-', ['package.json', 'tsconfig.json', 'src']);
    mkdirSync(join(project, 'rules'), { recursive: true });
    elsewhere = tempDir('tl-cliconf-env-');
  });
  after(() => {
    rmSync(project, { recursive: true, force: true });
    rmSync(elsewhere, { recursive: true, force: true });
  });
  afterEach(() => {
    rmSync(join(project, '.env'), { force: true });
    for (const d of ['store-here', 'data', 'rules/data', 'rules/store-here']) rmSync(join(project, d), { recursive: true, force: true });
  });

  it('from a subfolder, reads the project folder\'s .env and finds DATA_DIR from the project folder', async () => {
    writeFileSync(join(project, '.env'), 'DATA_DIR=./store-here\nPUBLIC_BASE_URL=https://track.example.test\n');
    const store = join(project, 'store-here', 'tracklane.db');
    const migrated = await cli(join(project, 'rules'), ['migrate']);
    expect(migrated.code, migrated.stderr).to.equal(0);
    expect(existsSync(store), 'migrate creates the store the .env names').to.equal(true);

    const made = await cli(join(project, 'rules'), ['accounts', 'create', '--name', 'Subfolder shop']);
    expect(made.code, made.stderr).to.equal(0);
    expect(made.stdout).to.match(/^\s*base_url\s+https:\/\/track\.example\.test$/m);
    expect(made.stderr).to.equal(`tracklane: database ${store}\n`);
    const listed = await cli(join(project, 'rules'), ['accounts', 'list', '--json']);
    expect((JSON.parse(listed.stdout) as { name: string }[]).map((a) => a.name)).to.deep.equal(['Subfolder shop']);
    expect(readdirSync(join(project, 'rules')), 'nothing made in the folder the command was typed in').to.deep.equal([]);
  });

  it('a command on a missing store fails naming the path and how the settings were found, and creates nothing', async () => {
    writeFileSync(join(project, '.env'), 'DATA_DIR=./store-here\n');
    const store = join(project, 'store-here', 'tracklane.db');
    await Promise.all([['accounts', 'list'], ['accounts', 'list', '--json'], ['accounts', 'create', '--name', 'Lost'], ['events', 'list'],
      ['backup', join(elsewhere, 'b.db')]].map(async (args) => {
      expectFailure(await cli(join(project, 'rules'), args), 1, `no store at ${store}; nothing was created. DATA_DIR=./store-here from ${join(project, '.env')}, `
        + `relative to the project folder ${project}; settings read from ${join(project, '.env')}. `
        + 'Set DATA_DIR (or ENV_FILE) as the service has them, or run "tracklane migrate" to create a new store there');
    }));
    expect(existsSync(join(project, 'store-here')), 'no store folder made').to.equal(false);
    expect(readdirSync(join(project, 'rules'))).to.deep.equal([]);
    expect(existsSync(join(elsewhere, 'b.db'))).to.equal(false);

    rmSync(join(project, '.env'));
    expectFailure(await cli(project, ['accounts', 'list']), 1, `no store at ${join(project, 'data', 'tracklane.db')}; nothing was created. `
      + `DATA_DIR is not set, so it is ./data in the project folder ${project}; no settings file read (no ${join(project, '.env')}, ENV_FILE not set). `
      + 'Set DATA_DIR (or ENV_FILE) as the service has them, or run "tracklane migrate" to create a new store there');
    expect(existsSync(join(project, 'data'))).to.equal(false);
  });

  it('the systemd layout: DATA_DIR in the environment, the rest in the file ENV_FILE names (relative to where it is typed)', async () => {
    const data = join(elsewhere, 'var-lib');
    writeFileSync(join(elsewhere, 'env'), 'PUBLIC_BASE_URL=https://from-env-file.example\n');
    const env = shellEnv({ DATA_DIR: data, ENV_FILE: '../env' });
    const missing = await cli(project, ['accounts', 'list'], shellEnv({ DATA_DIR: data, ENV_FILE: join(elsewhere, 'env') }));
    expectFailure(missing, 1, `no store at ${join(data, 'tracklane.db')}; nothing was created. DATA_DIR=${data} from the environment; `
      + `settings read from ${join(elsewhere, 'env')} (ENV_FILE). Set DATA_DIR (or ENV_FILE) as the service has them, or run "tracklane migrate" to create a new store there`);
    expect((await cli(project, ['migrate'], shellEnv({ DATA_DIR: data }))).code).to.equal(0);
    // ../env typed in the project's rules/ is the project folder's env: there is none.
    expectFailure(await cli(join(project, 'rules'), ['accounts', 'list'], env), 1, `ENV_FILE names ${join(project, 'env')}, which does not exist`);
    mkdirSync(join(elsewhere, 'sub'), { recursive: true });
    const ok = await cli(join(elsewhere, 'sub'), ['accounts', 'create', '--name', 'Unit shop', '--json'], env);
    expect(ok.code, ok.stderr).to.equal(0);
    expect(JSON.parse(ok.stdout)).to.include({ name: 'Unit shop', base_url: 'https://from-env-file.example' });
    rmSync(data, { recursive: true, force: true });
  });
});
