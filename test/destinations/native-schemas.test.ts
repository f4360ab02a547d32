// Every shipped plugin declares the schema of one native event; a typical rule mistake
// (a missing name, a wrong kind, a non-object section) is refused by it, a correct output
// passes. The golden tests show that every default rule's output passes.
import { expect } from 'chai';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadPlugins } from '../../src/destinations/load-plugins.ts';
import { nativeProblems } from '../../src/destinations/native-schema.ts';

const PLUGINS = join(fileURLToPath(new URL('../..', import.meta.url)), 'plugins');

const CASES: Record<string, { good: Record<string, unknown>; bad: Record<string, unknown>; problem: string }> = {
  'ga4': { good: { name: 'purchase', 'params.value': 1 }, bad: { 'params.value': 1 }, problem: "/: must have required property 'name'" },
  'google-ads': { good: { conversionAction: '123', currencyCode: 'EUR' }, bad: { kind: 'refund' }, problem: '/kind: must be equal to one of the allowed values' },
  'meta-capi': { good: { event_name: 'Purchase', 'custom_data.value': 1 }, bad: { event_name: 'Purchase', action_source: 'web' }, problem: '/action_source: must be equal to one of the allowed values' },
  'pinterest': { good: { event_name: 'checkout', 'custom_data.value': '1.5' }, bad: { event_name: 'checkout', 'custom_data.colour': 'red' }, problem: '/custom_data: must NOT have additional properties "colour"' },
  'tiktok': { good: { event: 'Purchase', 'properties.value': 1 }, bad: { event: 'Purchase', properties: 'x' }, problem: '/properties: must be object' },
  'webhook': { good: { type: 'lead_created', 'data.event': {} }, bad: { data: [] }, problem: '/data: must be object' },
};

describe('native schemas of the shipped plugins', () => {
  it('every plugin has one, and each refuses a typical mistake with its JSON path', async () => {
    const registry = await loadPlugins(PLUGINS);
    expect([...registry.keys()].sort()).to.deep.equal(Object.keys(CASES).sort());
    for (const [name, c] of Object.entries(CASES)) {
      const schema = registry.get(name)!.plugin.nativeSchema!;
      expect(nativeProblems(schema, c.good), name).to.deep.equal([]);
      expect(nativeProblems(schema, c.bad)[0], name).to.match(new RegExp(`^${c.problem.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`));
    }
  });

  it('nested output is checked as it stands, and a dot path nested anywhere is expanded first', async () => {
    const registry = await loadPlugins(PLUGINS);
    const tiktok = registry.get('tiktok')!.plugin.nativeSchema!;
    expect(nativeProblems(tiktok, { event: 'Purchase', properties: { value: 1 } })).to.deep.equal([]);
    expect(nativeProblems(tiktok, { event: 'Purchase', properties: 'x' })[0]).to.match(/^\/properties: must be object/);
    const pinterest = registry.get('pinterest')!.plugin.nativeSchema!;
    expect(nativeProblems(pinterest, { event_name: 'checkout', custom_data: { 'colour.shade': 'red' } })[0])
      .to.equal('/custom_data: must NOT have additional properties "colour"');
  });
});

