// Every shipped destination carries its own example settings (example-settings.ts), which the
// tests that cover every destination use instead of a list kept elsewhere: each passes its
// plugin's schema (test/delivery/user-agent.test.ts sends through each to a double).
import { expect } from 'chai';
import { shippedExampleSettings, shippedPluginNames, shippedPlugins } from '../helpers/shipped-plugins.ts';

describe('destinations: each folder\'s example settings', () => {
  it('every shipped plugin has them, and they pass its settings schema', async () => {
    const examples = await shippedExampleSettings();
    expect(Object.keys(examples)).to.deep.equal(shippedPluginNames());
    const registry = await shippedPlugins();
    for (const [name, settings] of Object.entries(examples)) {
      expect(registry.get(name)!.validateSettings(settings('https://double.test')), name).to.deep.equal([]);
    }
  });
});
