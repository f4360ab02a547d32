// The plugin loader: the real plugins load; a broken folder is refused with its path named.
import { expect } from 'chai';
import { mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadPlugins, PluginLoadError } from '../../src/destinations/load-plugins.ts';
import { PLUGINS_DIR, shippedPluginNames } from '../helpers/shipped-plugins.ts';
import { tempDir } from '../helpers/test-server.ts';

const VALID = `
const plugin = {
  name: 'NAME', version: '1.0.0', category: 'webhook', consent: null, description: 'test plugin',
  settingsSchema: { type: 'object', properties: { endpoint: { type: 'string' }, events: { type: 'array' }, consent_category: { type: 'string' }, key: { type: 'string' } }, required: ['key'], additionalProperties: false },
  secretSettings: ['key'], identifiers: null, batch: { maxEvents: 1 },
  buildRequests: () => [], classifyResponse: () => ({ outcome: 'success' }),
};
export default plugin;
`;

describe('plugin loader', () => {
  let dir: string;
  beforeEach(() => { dir = tempDir('tl-plugins-'); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function folder(name: string, source: string): string {
    mkdirSync(join(dir, name));
    writeFileSync(join(dir, name, 'index.ts'), source.replace('NAME', name));
    return join(dir, name);
  }

  it('loads every folder under plugins/, each under its folder name', async () => {
    const reg = await loadPlugins(PLUGINS_DIR);
    expect([...reg.keys()]).to.deep.equal(shippedPluginNames());
    for (const [name, loaded] of reg) {
      expect(loaded.folder).to.equal(join(PLUGINS_DIR, name));
      expect(loaded.plugin.name).to.equal(name);
    }
  });

  it('a new destination is one new folder', async () => {
    folder('acme', VALID);
    const reg = await loadPlugins(dir);
    expect(reg.has('acme')).to.equal(true);
    expect(reg.get('acme')!.validateSettings({ key: 'k' })).to.deep.equal([]);
    expect(reg.get('acme')!.validateSettings({})).to.deep.equal(["config: must have required property 'key'"]);
    expect(reg.get('acme')!.validateSettings({ key: 'k', nope: 1 })).to.deep.equal(['config: must NOT have additional properties "nope"']);
  });

  const broken: [string, (n: string) => string, RegExp][] = [
    ['a name that differs from the folder', () => VALID.replace("name: 'NAME'", "name: 'other'"), /name must equal the folder name/],
    ['no version', () => VALID.replace("version: '1.0.0', ", ''), /version must be a semver/],
    ['a category that is not a lowercase word', () => VALID.replace("'webhook'", "'Social Ads'"), /category must be a lowercase word/],
    ['an unknown consent flag', () => VALID.replace('consent: null', "consent: 'ads'"), /consent must be analytics, marketing, personalization or null/],
    ['an identifier rule with an unknown normaliser', () => VALID.replace('identifiers: null', "identifiers: { table: { em: { from: 'email', normalise: 'mail', hash: true } } }"), /identifiers.table\["em"\].normalise must be one of/],
    ['a native schema that does not compile', () => VALID.replace('identifiers: null', "identifiers: null, nativeSchema: { type: 'thing' }"), /nativeSchema does not compile/],
    ['an attribution source with neither cookie nor param', () => VALID.replace('identifiers: null', "identifiers: null, attribution: { ids: { x: [{ parse: () => 'x' }] } }"), /attribution.ids.x must be a list of sources/],
    ['no buildRequests', () => VALID.replace('buildRequests: () => [], ', ''), /buildRequests must be a function/],
    ['a zero batch', () => VALID.replace('maxEvents: 1', 'maxEvents: 0'), /batch.maxEvents/],
    ['no default export', () => 'export const x = 1;', /must default-export/],
    ['a syntax error', () => 'export default {', /failed to load/],
    ['a settings schema that does not compile', () => VALID.replace("required: ['key']", "required: 'key'"), /settingsSchema does not compile/],
    ['no common endpoint key', () => VALID.replace("endpoint: { type: 'string' }, ", ''), /common key "endpoint"/],
  ];
  for (const [what, source, re] of broken) {
    it(`refuses a plugin with ${what}, naming its folder`, async () => {
      const path = folder('broken-one', source('broken-one'));
      try {
        await loadPlugins(dir);
        expect.fail('loaded a broken plugin');
      } catch (e) {
        expect(e).to.be.instanceOf(PluginLoadError);
        expect((e as Error).message).to.include(path);
        expect((e as Error).message).to.match(re);
      }
    });
  }

  it('refuses a folder without index.ts', async () => {
    mkdirSync(join(dir, 'empty'));
    try {
      await loadPlugins(dir);
      expect.fail('loaded');
    } catch (e) {
      expect((e as Error).message).to.equal(`plugin ${join(dir, 'empty')}: has no index.ts`);
    }
  });
});
