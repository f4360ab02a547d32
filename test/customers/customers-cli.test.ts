// `tracklane customers list` and `customers new` through the real CLI; the scaffolded
// endpoint loads, is listed, and passes its own generated test under mocha.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSqliteStore, expectFailure, ROOT, type CliResult } from '../cli/run-cli.ts';
import { tempDir } from '../helpers/test-server.ts';
import { shippedFolderEnv } from '../helpers/shipped-folders.ts';
import { openCustomRecordStore } from '../../src/store/sqlite/custom-records.ts';
import { customersWithScaffold, SHIPPED_CUSTOMERS } from './fixtures.ts';
import { copyProject } from '../helpers/project-copy.ts';

/** `cmd` with the shipped rules, customers and plugins folders unless `env` names others. */
function run(cmd: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, cmd, { cwd: ROOT, env: { ...process.env, ...shippedFolderEnv(), DATABASE_URL: '', ...env }, encoding: 'utf8', timeout: 120_000 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }));
  });
}

describe('cli: customers', function () {
  this.timeout(120_000);
  let dataDir: string;
  let customersDir: string;
  let env: Record<string, string>;
  const cli = (...args: string[]) => run([join(ROOT, 'src/cli/bin.mjs'), ...args], env);

  before(() => {
    dataDir = tempDir();
    createSqliteStore(join(dataDir, 'tracklane.db'));
    customersDir = tempDir('tl-customers-');
    env = { DATA_DIR: dataDir, CUSTOMERS_DIR: customersDir };
  });
  after(() => {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(customersDir, { recursive: true, force: true });
  });

  it('customers list --json: the demo endpoints as a JSON array, beside an endpoint an operator has added', async () => {
    const operator = await customersWithScaffold();
    try {
      const r = await run([join(ROOT, 'src/cli/bin.mjs'), 'customers', 'list', '--json'], { DATA_DIR: dataDir, CUSTOMERS_DIR: operator });
      expect(r.stderr).to.equal('');
      expect(r.code).to.equal(0);
      const list = JSON.parse(r.stdout);
      const names = list.map((e: any) => `${e.customer}/${e.endpoint}`);
      expect(names).to.include('acme/lead-sync');
      const demo = list.filter((e: any) => SHIPPED_CUSTOMERS.includes(e.customer));
      expect(demo.map((e: any) => `${e.customer}/${e.endpoint}`)).to.deep.equal([
        'demo/order-sync', 'demo/patient-interaction', 'demo/supply-chain-event', 'demo/transaction-analytics',
      ]);
      expect(demo[0]).to.deep.include({
        path: '/service/custom/order-sync',
        auth: ['api_key'],
        rate_limit: { production: { per_minute: 6000, burst: 300 }, test: { per_minute: 1000, burst: 1000 } },
        // The shipped folder loads first; the operator's link to the same customer counts once.
        folder: join(ROOT, 'customers/demo/endpoints/order-sync'),
      });
      expect(demo[2].rate_limit.test, 'the documented default for test').to.deep.equal({ per_minute: 1000, burst: 1000 });
    } finally {
      rmSync(operator, { recursive: true, force: true });
    }
  });

  it('customers list with no endpoint anywhere says so; text output is a table', async () => {
    // A project without customers/: the shipped folder holds nothing, nor does CUSTOMERS_DIR.
    const bare = copyProject('tl-no-customers-', ['package.json', 'tsconfig.json', 'src']);
    try {
      const empty = await run([join(bare, 'src/cli/bin.mjs'), 'customers', 'list'], env);
      expect(empty.code, empty.stderr).to.equal(0);
      expect(empty.stdout).to.equal(`no custom endpoints under ${join(bare, 'customers')}, ${customersDir}\n`);
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
    const demo = await run([join(ROOT, 'src/cli/bin.mjs'), 'customers', 'list'], { DATA_DIR: dataDir });
    expect(demo.stdout.split('\n')[0]).to.match(/^CUSTOMER +ENDPOINT +AUTH +PRODUCTION\/MIN +TEST\/MIN +VERSIONS +DESCRIPTION$/);
    expect(demo.stdout).to.match(/^demo +patient-interaction +ip_allow, jwt +1200 +1000 +1 current \(uses: 0 production, 0 test\) /m);
  });

  it('customers list counts each version\'s requests in production and in test, and says which', async () => {
    const records = openCustomRecordStore(join(dataDir, 'tracklane.db'));
    const use = { scriptId: 'AB12CD34', customer: 'demo', endpoint: 'patient-interaction', version: 1, at: Date.now() };
    records.countUse({ ...use, env: 'production' });
    for (let i = 0; i < 3; i++) records.countUse({ ...use, env: 'test' });
    await records.drain();
    await records.close();
    const demo = await run([join(ROOT, 'src/cli/bin.mjs'), 'customers', 'list'], { DATA_DIR: dataDir });
    expect(demo.stdout).to.match(/^demo +patient-interaction +.* 1 current \(uses: 1 production, 3 test\) /m);
  });

  it('customers new scaffolds a working endpoint that loads, is listed, and passes its own generated test', async () => {
    const made = await cli('customers', 'new', 'acme', 'lead-sync', '--json');
    expect(made.stderr).to.equal('');
    expect(made.code).to.equal(0);
    const folder = join(customersDir, 'acme/endpoints/lead-sync');
    expect(JSON.parse(made.stdout)).to.deep.equal({
      customer: 'acme',
      endpoint: 'lead-sync',
      folder,
      path: '/service/custom/lead-sync',
      files: ['endpoint.json', 'README.md', 'lead-sync.test.ts', 'versions/1/schema.json', 'versions/1/handler.ts', 'versions/1/example.json'],
    });
    expect(readdirSync(folder).sort()).to.deep.equal(['README.md', 'endpoint.json', 'lead-sync.test.ts', 'versions']);
    expect(readdirSync(join(folder, 'versions/1')).sort()).to.deep.equal(['example.json', 'handler.ts', 'schema.json']);
    expect(JSON.parse(readFileSync(join(folder, 'endpoint.json'), 'utf8'))).to.include({ current_version: 1 });
    // Outside this package the folder is declared ES modules, as handlers need.
    expect(JSON.parse(readFileSync(join(customersDir, 'package.json'), 'utf8'))).to.deep.equal({ private: true, type: 'module' });

    const human = await cli('customers', 'new', 'acme', 'order-sync');
    expect(human.stdout, 'the hint binds with the plan the endpoint needs').to.contain(
      'npx tracklane accounts update ID --tier CUSTOM --customer acme');
    expect(human.stdout).to.contain('loads the new endpoint within a few seconds (no restart)');
    expect(readFileSync(join(customersDir, 'acme/endpoints/order-sync/README.md'), 'utf8')).to.contain('--tier CUSTOM --customer acme');
    rmSync(join(customersDir, 'acme/endpoints/order-sync'), { recursive: true, force: true });

    const listed = JSON.parse((await cli('customers', 'list', '--json')).stdout);
    expect(listed.filter((e: any) => !SHIPPED_CUSTOMERS.includes(e.customer)).map((e: any) => [e.customer, e.endpoint, e.auth])).to.deep.equal([['acme', 'lead-sync', []]]);

    // The files import the service only through the SDK, and the README says how to run the test, which passes as written.
    for (const file of ['lead-sync.test.ts', 'versions/1/handler.ts']) {
      expect(readFileSync(join(folder, file), 'utf8')).to.match(/from 'tracklane\/sdk(\/testing)?';/).and.not.match(/from '\.\.?\//);
    }
    expect(readFileSync(join(folder, 'README.md'), 'utf8')).to.include('npx tracklane test <this folder>').and.not.include('customers/acme');
    const tested = await cli('test', folder);
    expect(tested.code, tested.stdout + tested.stderr).to.equal(0);
    expect(tested.stdout).to.match(/7 passing/);
    expect(tested.stdout).to.not.match(/failing/);
  });

  it('the text output says what to do next', async () => {
    const r = await cli('customers', 'new', 'acme', 'second');
    expect(r.code).to.equal(0);
    expect(r.stdout).to.include('npx tracklane accounts update ID --tier CUSTOM --customer acme');
    expect(r.stdout).to.include('second.test.ts');
    expect(r.stdout).to.include(`npx tracklane test ${join(customersDir, 'acme/endpoints/second')}`);
  });

  it('refuses to overwrite, bad names, and a wrong command line', async () => {
    expectFailure(await cli('customers', 'new', 'acme', 'lead-sync', '--json'), 1, /^tracklane: .*acme\/endpoints\/lead-sync already exists; pick another endpoint name or edit it\n$/);
    expectFailure(await cli('customers', 'new', 'Acme', 'x', '--json'), 1, 'SLUG must be lowercase letters, digits and dashes, got "Acme"');
    expectFailure(await cli('customers', 'new', 'acme', 'lead_sync', '--json'), 1, 'ENDPOINT must be lowercase letters, digits and dashes, got "lead_sync"');
    const missing = await cli('customers', 'new', 'acme', '--json');
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.match(/^tracklane: missing ENDPOINT\n/);
    const unknown = await cli('customers', 'frob');
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.match(/^tracklane: unknown customers command "frob"\n/);
  });

  it('customers list names a broken folder and exits 1', async () => {
    writeFileSync(join(customersDir, 'acme/endpoints/lead-sync/versions/1/example.json'), '{"reference": 1, "occurred_at": "2024-05-01T12:00:00Z"}');
    const r = await cli('customers', 'list', '--json');
    expectFailure(r, 1, new RegExp(`^tracklane: custom endpoint ${join(customersDir, 'acme/endpoints/lead-sync/versions/1')}: example\\.json does not pass schema\\.json: reference must be a string, got a whole number\\n$`));
    expect(existsSync(join(customersDir, 'acme/endpoints/lead-sync/versions/1/handler.ts'))).to.equal(true);
  });
});
