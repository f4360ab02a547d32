// Every shipped plugin declares the schema of one native event, and its own schema says what
// a typical rule mistake is: a required key left out, a declared key of the wrong kind, a key
// a closed schema does not know; each is refused with its JSON path. The golden tests show
// that every default rule's output passes.
import { expect } from 'chai';
import { nativeProblems } from '../../src/destinations/native-schema.ts';
import { shippedPluginNames, shippedPlugins } from '../helpers/shipped-plugins.ts';

interface ObjectSchema { required?: string[]; properties?: Record<string, unknown>; additionalProperties?: unknown }

/** A declared key accepts anything when its schema is `true` or `{}`: there is no wrong kind to try. */
const constrains = (schema: unknown) => schema !== true && !(typeof schema === 'object' && schema !== null && Object.keys(schema).length === 0);

describe('native schemas of the shipped plugins', () => {
  it('every plugin has one, and each refuses a missing, mistyped or unknown key with its JSON path', async () => {
    const registry = await shippedPlugins();
    expect([...registry.keys()]).to.deep.equal(shippedPluginNames());
    for (const [name, { plugin }] of registry) {
      const schema = plugin.nativeSchema;
      expect(schema, `${name} declares a native schema`).to.be.an('object');
      const { required = [], properties = {}, additionalProperties } = schema as ObjectSchema;
      const missing = nativeProblems(schema!, {});
      for (const key of required) expect(missing, name).to.include(`/: must have required property '${key}'`);
      const typed = Object.entries(properties).filter(([, s]) => constrains(s)).map(([key]) => key);
      expect(typed, `${name}: at least one declared key has a kind a rule can get wrong`).to.not.be.empty;
      for (const key of typed) {
        const problems = nativeProblems(schema!, { [key]: null });
        expect(problems.some((p) => p.startsWith(`/${key}: `)), `${name}: null for ${key} is refused at /${key}: ${JSON.stringify(problems)}`).to.equal(true);
      }
      if (additionalProperties === false) {
        expect(nativeProblems(schema!, { tracklane_unknown_key: 1 }), name).to.include('/: must NOT have additional properties "tracklane_unknown_key"');
      }
    }
  });

  it('nested output is checked as it stands, and a dot path nested anywhere is expanded first', async () => {
    const registry = await shippedPlugins();
    const tiktok = registry.get('tiktok')!.plugin.nativeSchema!;
    expect(nativeProblems(tiktok, { event: 'Purchase', properties: { value: 1 } })).to.deep.equal([]);
    expect(nativeProblems(tiktok, { event: 'Purchase', properties: 'x' })[0]).to.match(/^\/properties: must be object/);
    const pinterest = registry.get('pinterest')!.plugin.nativeSchema!;
    expect(nativeProblems(pinterest, { event_name: 'checkout', custom_data: { 'colour.shade': 'red' } })[0])
      .to.equal('/custom_data: must NOT have additional properties "colour"');
  });
});

