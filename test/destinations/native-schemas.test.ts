// Every shipped plugin declares the schema of one native event, and its own schema says what
// a typical rule mistake is: a required key left out, a declared key of the wrong kind, a key
// a closed schema does not know; each is refused with its JSON path. The golden tests show
// that every default rule's output passes.
import { expect } from 'chai';
import { literalOutputProblems, nativeProblems } from '../../src/destinations/native-schema.ts';
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

  it('a rule\'s literal outputs are judged alone, before any event: what computed keys decide is never reported', async () => {
    const ga4 = (await shippedPlugins()).get('ga4')!.plugin.nativeSchema!;
    expect(literalOutputProblems(ga4, { name: 42, 'params.value': { var: 'event.value' } })).to.deep.equal([{ key: 'name', problems: ['/name: must be string'] }]);
    expect(literalOutputProblems(ga4, { name: 'purchase', 'params.page_location': ['a'] })).to.deep.equal([{ key: 'params.page_location', problems: ['/params/page_location: must be string'] }]);
    // Computed values, null (left out) and a required key only an expression gives: nothing to say.
    expect(literalOutputProblems(ga4, { name: { var: 'event.name' }, 'params.page_location': { cat: ['https://', { var: 'context.url' }] } })).to.deep.equal([]);
    expect(literalOutputProblems(ga4, { 'params.page_location': 'https://shop.example/', 'params.page_referrer': null })).to.deep.equal([]);
    // A closed object names the literal key it does not know; a computed key is not judged.
    const closed = { type: 'object', required: ['event'], additionalProperties: false, properties: { event: { type: 'string' }, data: { type: 'object', additionalProperties: false, properties: { v: { type: 'number' } } } } };
    expect(literalOutputProblems(closed, { 'data.w': 1, 'data.v': { var: 'x' } })).to.deep.equal([{ key: 'data.w', problems: ['/data: must NOT have additional properties "w"'] }]);
    // A branch the whole object chooses (computed members included) is not decided by the literals.
    const branches = { type: 'object', properties: { data: { type: 'object', anyOf: [{ type: 'object', required: ['id'], properties: { id: { type: 'string' }, kind: { const: 'a' } } }, { type: 'object', properties: { kind: { const: 'b' } } }] } } };
    expect(literalOutputProblems(branches, { 'data.kind': 'a', 'data.id': { var: 'event.id' } })).to.deep.equal([]);
    const chosen = { type: 'object', if: { type: 'object', properties: { name: { const: 'purchase' } } }, then: { type: 'object', properties: { value: { type: 'number' } } } };
    expect(literalOutputProblems(chosen, { name: { var: 'event.name' }, value: 'x' })).to.deep.equal([]);
    // A literal's own anyOf is its own: refused with every branch's complaint.
    expect(literalOutputProblems(ga4, { name: 'x', 'user_properties.tier': [1] })[0].key).to.equal('user_properties.tier');
  });
});
