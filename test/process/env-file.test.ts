// One configuration for the CLI and the server: a .env in the project folder sets DATA_DIR
// for both (relative to the project folder), so an account made with the CLI as the README
// says is one the server accepts; the CLI names the database it used; real environment
// variables win. Runs a copy of the project, whose .env is the copy's.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadEnvFile } from '../../src/env-file.ts';
import { spawnServer, type SpawnedServer } from '../helpers/spawn-server.ts';
import { tempDir } from '../helpers/test-server.ts';
import { copyProject } from '../helpers/project-copy.ts';
import { shippedFolders } from '../helpers/shipped-folders.ts';
import type { CliResult } from '../cli/run-cli.ts';

describe('process: .env shared by the CLI and the server', function () {
  this.timeout(90_000);
  let dir: string;
  let server: SpawnedServer | undefined;
  const baseEnv = () => {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !['DATA_DIR', 'DATABASE_URL', 'ENV_FILE'].includes(k)) env[k] = v;
    return env;
  };
  const cli = (args: string[], env: Record<string, string> = baseEnv()) => new Promise<CliResult>((resolve) => {
    execFile(process.execPath, [join(dir, 'src/cli/bin.mjs'), ...args], { cwd: dir, env, encoding: 'utf8' }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }));
  });

  /** `project`: a copy of the project (its CLI and server), else an empty folder. */
  const folder = (project: boolean) => {
    dir = project ? copyProject('tl-envfile-', ['package.json', 'tsconfig.json', 'src']) : tempDir('tl-envfile-');
    writeFileSync(join(dir, '.env'), [
      '# tracklane settings for this folder',
      'DATA_DIR=./somewhere',
      `PLUGINS_DIR=${shippedFolders().pluginsDir}`,
      `RULES_DIR=${shippedFolders().rulesDir}`,
      `CUSTOMERS_DIR=${shippedFolders().customersDir}`,
      'PUBLIC_BASE_URL="http://localhost:8080"',
    ].join('\n'));
  };
  afterEach(async () => {
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
      server = undefined;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('an account created with the CLI is accepted by a server started in the same folder', async () => {
    folder(true);
    expect((await cli(['migrate'])).code).to.equal(0);
    const made = await cli(['accounts', 'create', '--name', 'Env shop', '--tier', 'FLEX', '--addon', '--json']);
    expect(made.code, made.stderr).to.equal(0);
    expect(made.stderr, '--json stays clean').to.equal('');
    const { script_id: id, access_token: token } = JSON.parse(made.stdout) as { script_id: string; access_token: string };
    const human = await cli(['accounts', 'list']);
    expect(human.stderr).to.equal(`tracklane: database ${join(dir, 'somewhere', 'tracklane.db')}\n`);

    const env = baseEnv();
    server = await spawnServerIn(dir, env);
    expect(server.output()).to.contain(`"database":"${join(dir, 'somewhere', 'tracklane.db')}"`);
    const r = await fetch(`${server.url}/webhooks/service/event?id=${id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-access-token': token },
      body: JSON.stringify({ event: { name: 'lead_created', id: 'L-ENV' }, context: { environment: 'prod', data_source: 'crm' } }),
    });
    expect(r.status).to.equal(200);
  });

  it('real environment variables win over the file; ENV_FILE names another file; a missing ENV_FILE is a clear error', () => {
    folder(false);
    const env: NodeJS.ProcessEnv = { DATA_DIR: '/from/env' };
    const r = loadEnvFile({ cwd: dir, env });
    expect(r.file).to.equal(join(dir, '.env'));
    expect(env.DATA_DIR).to.equal('/from/env');
    expect(env.PUBLIC_BASE_URL).to.equal('http://localhost:8080');
    expect(r.applied).to.not.include('DATA_DIR');
    mkdirSync(join(dir, 'conf'));
    writeFileSync(join(dir, 'conf', 'prod.env'), 'RETENTION_DAYS=9\n');
    const other: NodeJS.ProcessEnv = { ENV_FILE: 'conf/prod.env' };
    loadEnvFile({ cwd: dir, env: other });
    expect(other.RETENTION_DAYS).to.equal('9');
    expect(() => loadEnvFile({ cwd: dir, env: { ENV_FILE: 'nope.env' } })).to.throw(/ENV_FILE names .*nope\.env, which does not exist/);
    expect(loadEnvFile({ cwd: join(dir, 'conf'), env: {} }).file, 'no .env: nothing read').to.equal(null);
  });
});

/** The server entry of the project in `cwd`, started there as `npm start` would (reading cwd's .env: no ENV_FILE). */
async function spawnServerIn(cwd: string, env: Record<string, string>): Promise<SpawnedServer> {
  return spawnServer({ ...env, ENV_FILE: '', PORT: '0', HOST: '127.0.0.1' }, 15_000, cwd, [process.execPath, join(cwd, 'src/index.cjs')]);
}
