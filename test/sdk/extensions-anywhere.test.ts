// Extenders work from their own repository (issue: "a real SDK, plugins and endpoints
// anywhere"), end to end with real processes:
// - a destination plugin and a customers folder kept outside the checkout, each in a folder of
//   its own, pass their tests with `npx tracklane test FOLDER`, and a server started with
//   PLUGINS_DIR / CUSTOMERS_DIR naming them delivers to the plugin (a loopback double) and
//   serves the endpoints, handlers running in their worker threads;
// - adding a destination to a checkout touches only its folder: `plugins new` in a clone, the
//   folder git-added, and the tests that discover every plugin pass with nothing else edited.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAccountService } from '../../src/accounts/account-service.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { copyProject } from '../helpers/project-copy.ts';
import { ROOT, spawnServer, type SpawnedServer } from '../helpers/spawn-server.ts';
import { tempDir } from '../helpers/test-server.ts';
import { testProcessEnv } from '../helpers/service-variables.ts';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, env: testProcessEnv(env), encoding: 'utf8', timeout: 600_000, maxBuffer: 32 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }));
  });
}

const sha256Email = '86e0b9e56c17cc4d12387e1949b85053fbe73bc3ce5a1188713a9d300cc6133d'; // jane.doe@example.com

describe('extensions anywhere: an outside plugin and customers folder; a new destination in a checkout', function () {
  this.timeout(600_000);

  describe('kept in repositories of their own', () => {
    let operator: string;
    let plugins: string;
    let customers: string;
    let server: SpawnedServer | undefined;
    let double: DestinationDouble | undefined;

    before(async () => {
      operator = tempDir('tl-operator-');
      // The plugin: scaffolded somewhere, then copied into the operator's plugins repository.
      const scratch = tempDir('tl-scratch-plugins-');
      const made = await run(process.execPath, [join(ROOT, 'src/cli/bin.mjs'), 'plugins', 'new', 'acme-ads'], ROOT, { PLUGINS_DIR: scratch });
      expect(made.code, made.stderr).to.equal(0);
      plugins = join(operator, 'acme-plugins');
      cpSync(scratch, plugins, { recursive: true });
      rmSync(scratch, { recursive: true, force: true });
      // The customers: the shipped demo, copied into the operator's customers repository as a customer of its own.
      customers = join(operator, 'acme-customers');
      cpSync(join(ROOT, 'customers/demo'), join(customers, 'acme-demo'), { recursive: true });
      writeFileSync(join(customers, 'package.json'), '{"private": true, "type": "module"}\n');
    });
    after(async () => {
      if (server) {
        server.child.kill('SIGTERM');
        await server.exited;
      }
      await double?.close();
      rmSync(operator, { recursive: true, force: true });
    });

    it('the plugin folder passes its tests with npx tracklane test', async () => {
      const r = await run('npx', ['tracklane', 'test', join(plugins, 'acme-ads')], ROOT);
      expect(r.code, r.stdout + r.stderr).to.equal(0);
      expect(r.stdout).to.match(/\d+ passing/).and.not.match(/failing/);
    });

    it('the customers folder passes its tests with npx tracklane test', async () => {
      const r = await run('npx', ['tracklane', 'test', join(customers, 'acme-demo')], ROOT);
      expect(r.code, r.stdout + r.stderr).to.equal(0);
      expect(r.stdout).to.match(/\d+ passing/).and.not.match(/failing/);
    });

    it('a server with PLUGINS_DIR and CUSTOMERS_DIR naming them delivers to the plugin and serves the endpoints', async () => {
      double = await startDestinationDouble();
      double.otherwise({ status: 200, body: { ok: true } });
      const data = tempDir('tl-anywhere-data-');
      const setup = openSqliteStore({ file: join(data, 'tracklane.db'), writerThread: false });
      const accounts = createAccountService(setup);
      const shop = await accounts.create({ name: 'Shop', tier: 'FLEX', addon: true, country: 'RO' });
      await setup.destinations.add({
        id: 'dst_00000000acmeads1', scriptId: shop.account.scriptId, type: 'acme-ads', name: 'acme', enabled: true,
        settings: { account_id: 'acct_123', api_key: 'key-example', endpoint: double.url },
      });
      const partner = await accounts.create({ name: 'Partner', tier: 'CUSTOM', addon: false });
      await accounts.update(partner.account.scriptId, { customer: 'acme-demo', approveEvents: ['order_delivered'] });
      await setup.close();

      server = await spawnServer({ DATA_DIR: data, PLUGINS_DIR: plugins, CUSTOMERS_DIR: customers, ALLOW_PRIVATE_DESTINATIONS: '1' }, 60_000);
      const post = (path: string, query: string, token: string, body: unknown) => fetch(`${server!.url}${path}?${query}`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-service-access-token': token }, body: JSON.stringify(body),
      });

      const event = {
        event: { name: 'checkout_completed', id: 'ORD-ANY-1', value: 59.9, currency: 'EUR' },
        context: { environment: 'prod', data_source: 'website', url: 'https://shop.example/thanks' },
        products: [{ id: 'SKU-1', name: 'Lamp', category: 'Home', price_base: 59.9, price: 59.9, quantity: 1, tax_percent: 19 }],
        user: { email: 'jane.doe@example.com' },
        consent: { analytics: true, personalization: true, marketing: true },
      };
      const sent = await post(INTAKE_PATHS.event, `id=${shop.account.scriptId}`, shop.accessToken, event);
      expect(sent.status, await sent.text()).to.equal(200);
      await double.waitFor(() => double!.requests.length >= 1, 30_000, 'the outside plugin\'s request');
      const [req] = double.requests;
      expect(req.path).to.equal('/v1/accounts/acct_123/events');
      expect(req.headers.authorization).to.equal('Bearer key-example');
      expect(req.json<{ events: Record<string, unknown>[] }>().events).to.deep.equal([{
        event_id: 'ORD-ANY-1', event_time: req.json<{ events: { event_time: number }[] }>().events[0].event_time,
        user: { em: sha256Email }, event_name: 'purchase', value: 59.9, currency: 'EUR', order_id: 'ORD-ANY-1',
      }]);

      const example = JSON.parse(readFileSync(join(customers, 'acme-demo/endpoints/supply-chain-event/example.json'), 'utf8'));
      const custom = await post('/service/custom/supply-chain-event', `id=${partner.account.scriptId}&env=test`, partner.accessToken, example);
      const answer = await custom.text();
      expect(custom.status, answer).to.equal(200);
      expect(JSON.parse(answer).result).to.equal('ok');
      expect(server.output()).to.not.match(/does not load|is skipped/);
    });
  });

  describe('a new destination in a checkout', () => {
    let project: string;
    after(() => project && rmSync(project, { recursive: true, force: true }));

    it('touches only its folder: scaffolded, git-added, and the tests that discover every plugin pass unedited', async () => {
      project = copyProject('tl-new-destination-');
      const git = (...args: string[]) => run('git', args, project);
      for (const args of [['init', '-q'], ['add', '-A'], ['-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'the checkout']]) {
        const r = await git(...args);
        expect(r.code, r.stderr).to.equal(0);
      }
      const made = await run(process.execPath, [join(project, 'src/cli/bin.mjs'), 'plugins', 'new', 'zebra-ads'], project);
      expect(made.code, made.stderr).to.equal(0);
      expect((await git('add', 'plugins/zebra-ads')).code).to.equal(0);
      const status = await git('status', '--porcelain');
      expect(status.stdout.split('\n').filter(Boolean).every((line) => line.startsWith('A  plugins/zebra-ads/')), status.stdout).to.equal(true);

      const discovering = [
        'test/destinations/readme-table.test.ts', 'test/destinations/load-plugins.test.ts', 'test/destinations/native-schemas.test.ts',
        'test/destinations/example-settings.test.ts', 'test/pipeline/read-only-inputs.test.ts', 'test/delivery/user-agent.test.ts',
        'test/sdk/extension-imports.test.ts', 'test/platform-free.test.ts', 'test/schema/precompiled.test.ts',
        'plugins/zebra-ads/golden.test.ts', 'plugins/zebra-ads/zebra-ads.test.ts',
      ];
      const tests = await run(process.execPath, [join(project, 'node_modules/mocha/bin/mocha.js'), ...discovering], project);
      expect(tests.code, tests.stdout + tests.stderr).to.equal(0);
      expect(tests.stdout).to.not.match(/failing/);
      expect(tests.stdout).to.include('zebra-ads');
      expect((await git('status', '--porcelain')).stdout, 'nothing outside the folder changed').to.equal(status.stdout);
    });
  });
});
