// PLUGINS_DIR and CUSTOMERS_DIR list `:`-separated folders anywhere on disk, loaded after the
// shipped plugins/ and customers/ in the order listed: adding to them, never replacing them.
// A plugin type or a customer in two folders is refused, naming both; a folder listed twice,
// or linked to one already listed, counts once; hot reload and plugin default rules cover
// every folder.
import { expect } from 'chai';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { extensionFolders, loadConfig, SHIPPED_FOLDERS } from '../../src/config.ts';
import { loadPlugins, PluginLoadError } from '../../src/destinations/load-plugins.ts';
import { loadCustomers } from '../../src/customers/load-customers.ts';
import { CustomerLoadError } from '../../src/customers/load-endpoint.ts';
import { loadRules } from '../../src/rules/load-rules.ts';
import { shippedPluginNames, PLUGINS_DIR } from '../helpers/shipped-plugins.ts';
import { startTestServer, tempDir, waitFor } from '../helpers/test-server.ts';
import { customersRoot, SHIPPED_CUSTOMERS, writeEndpoint } from '../customers/fixtures.ts';

/** A valid plugin folder `name` in `dir`, built on the SDK, with one default rule. */
function writePlugin(dir: string, name: string, description = `${name} test plugin`): string {
  const folder = join(dir, name);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'index.ts'), `import { COMMON_SETTINGS_PROPERTIES, isSuccessStatus, type DestinationPlugin } from 'tracklane/sdk';
const plugin: DestinationPlugin = {
  name: '${name}', version: '1.0.0', category: 'webhook', consent: null, description: ${JSON.stringify(description)},
  settingsSchema: { type: 'object', properties: { ...COMMON_SETTINGS_PROPERTIES, key: { type: 'string' } }, required: ['key'], additionalProperties: false },
  secretSettings: ['key'], identifiers: null, batch: { maxEvents: 1 },
  buildRequests: () => [], classifyResponse: (r) => (isSuccessStatus(r.status) ? { outcome: 'success' } : { outcome: 'permanent', message: 'no' }),
};
export default plugin;
`);
  writeFileSync(join(folder, 'rules.json'), JSON.stringify({ destination: name, rules: [{ id: `${name}.all`, event: '*', output: { name: 'all' } }] }));
  return folder;
}

describe('PLUGINS_DIR and CUSTOMERS_DIR: lists of folders added to the shipped ones', () => {
  let scratch: string;
  beforeEach(() => { scratch = tempDir('tl-ext-folders-'); });
  afterEach(() => rmSync(scratch, { recursive: true, force: true }));

  describe('config', () => {
    it('the shipped folder first, then each listed one in order, relative ones from the project; the first listed is where scaffolds go', () => {
      const c = loadConfig({ PLUGINS_DIR: '/srv/acme-plugins:more-plugins', CUSTOMERS_DIR: '/srv/acme-customers' }, '/srv/app');
      expect(c.pluginsDirs).to.deep.equal([SHIPPED_FOLDERS.plugins, '/srv/acme-plugins', '/srv/app/more-plugins']);
      expect(c.customersDirs).to.deep.equal([SHIPPED_FOLDERS.customers, '/srv/acme-customers']);
      expect(c).to.include({ newPluginsDir: '/srv/acme-plugins', newCustomersDir: '/srv/acme-customers' });
    });

    it('a folder listed twice, the shipped one listed, a link to one already there and empty entries count once', () => {
      const real = join(scratch, 'real');
      mkdirSync(real);
      symlinkSync(real, join(scratch, 'link'));
      const { dirs, first } = extensionFolders(`${SHIPPED_FOLDERS.plugins}::${real}:${join(scratch, 'link')}:${real}:`, '/srv/app', SHIPPED_FOLDERS.plugins);
      expect(dirs).to.deep.equal([SHIPPED_FOLDERS.plugins, real]);
      expect(first, 'the first listed, even when it is the shipped one').to.equal(SHIPPED_FOLDERS.plugins);
    });
  });

  describe('plugins', () => {
    it('load from every folder, the shipped ones first, and their rules.json are default rules', async () => {
      const a = join(scratch, 'a');
      const b = join(scratch, 'b');
      writePlugin(a, 'acme-hook');
      writePlugin(b, 'zeta-hook');
      const registry = await loadPlugins([PLUGINS_DIR, a, b]);
      expect([...registry.keys()]).to.deep.equal([...shippedPluginNames(), 'acme-hook', 'zeta-hook']);
      expect(registry.get('zeta-hook')!.folder).to.equal(join(b, 'zeta-hook'));
      mkdirSync(join(scratch, 'rules'));
      const loaded = loadRules(join(scratch, 'rules'), { pluginsDir: [PLUGINS_DIR, a, b] });
      expect(loaded.ok, JSON.stringify(loaded)).to.equal(true);
      if (loaded.ok) expect(loaded.ruleSet.rulesFor('AB12CD34', 'zeta-hook').map((r) => r.id)).to.deep.equal(['zeta-hook.all']);
    });

    it('a type in two folders stops the load, naming both; the same folder linked into two counts once', async () => {
      const a = join(scratch, 'a');
      const b = join(scratch, 'b');
      const first = writePlugin(a, 'acme-hook', 'the first');
      writePlugin(b, 'acme-hook', 'the second');
      const err = await loadPlugins([a, b]).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(PluginLoadError);
      expect((err as Error).message).to.equal(`plugin ${join(b, 'acme-hook')}: the plugin type "acme-hook" is also ${first}: a type is one folder; rename one (its folder and its name) or list only one of the two folders`);
      rmSync(join(b, 'acme-hook'), { recursive: true });
      symlinkSync(first, join(b, 'acme-hook'));
      const registry = await loadPlugins([a, b]);
      expect(registry.get('acme-hook')!.plugin.description).to.equal('the first');
      expect(registry.get('acme-hook')!.folder).to.equal(first);
    });

    it('a shipped type in a listed folder is refused the same way', async () => {
      writePlugin(join(scratch, 'a'), 'webhook');
      const err = await loadPlugins([PLUGINS_DIR, join(scratch, 'a')]).catch((e: unknown) => e);
      expect((err as Error).message).to.include(`the plugin type "webhook" is also ${join(PLUGINS_DIR, 'webhook')}`);
    });
  });

  describe('custom endpoints', () => {
    it('load from every folder; a customer found again in a later folder is refused, naming both', async () => {
      const a = customersRoot();
      const b = customersRoot();
      writeEndpoint(a, 'acme', 'leads');
      writeEndpoint(b, 'zeta', 'orders');
      const registry = await loadCustomers([a, b]);
      expect([...registry.keys()]).to.deep.equal(['acme', 'zeta']);
      writeEndpoint(b, 'acme', 'orders');
      const err = await loadCustomers([a, b]).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(CustomerLoadError);
      expect((err as Error).message).to.equal(`custom endpoint ${join(b, 'acme')}: the customer "acme" is also ${join(a, 'acme')}: a customer is one folder, which holds all its endpoints`);
      const broken: string[] = [];
      const served = await loadCustomers([a, b], { onBroken: (e) => broken.push(e.folder) });
      expect([...served.get('acme')!.keys()], 'the first folder serves').to.deep.equal(['leads']);
      expect(broken).to.deep.equal([join(b, 'acme')]);
      rmSync(a, { recursive: true, force: true });
      rmSync(b, { recursive: true, force: true });
    });

    it('a running server serves every listed folder after the shipped one, and loads an endpoint added to a listed folder without a restart', async function () {
      this.timeout(30_000);
      const a = customersRoot();
      const b = customersRoot();
      writeEndpoint(a, 'acme', 'leads');
      const s = await startTestServer({ CUSTOMERS_DIR: `${a}:${b}` });
      try {
        expect([...s.running.customers.keys()]).to.deep.equal([...SHIPPED_CUSTOMERS, 'acme']);
        const zeta = await s.account({ tier: 'CUSTOM' });
        await s.accounts.update(zeta.scriptId, { customer: 'zeta' });
        const post = () => s.post('/service/custom/orders', { n: 1 }, { account: zeta, query: `id=${zeta.scriptId}&env=test` });
        expect((await post()).status).to.equal(404);
        writeEndpoint(b, 'zeta', 'orders');
        expect(await waitFor(async () => (await post()).status === 200, 8_000), 'the endpoint in the second listed folder answers').to.equal(true);
      } finally {
        await s.close();
        rmSync(a, { recursive: true, force: true });
        rmSync(b, { recursive: true, force: true });
      }
    });
  });
});
