// Endpoint 2's preview when a rule's output fails the plugin's native schema: that
// destination is skipped with build_failed and a message naming the rule and JSON path;
// the other destinations of the account are previewed as usual.
import { expect } from 'chai';
import type { LoadedPlugin, PluginRegistry } from '../../src/destinations/load-plugins.ts';
import type { DestinationPlugin } from '../../src/destinations/types.ts';
import { previewEvent } from '../../src/pipeline/preview-event.ts';
import { createRuleSet } from '../../src/rules/rule-set.ts';
import type { NormalizedEvent } from '../../src/schema/types.ts';
import type { DestinationRecord } from '../../src/store/types.ts';

const NOW = 1_700_000_000_000;

function plugin(name: string, nativeSchema?: Record<string, unknown>): LoadedPlugin {
  const p: DestinationPlugin = {
    name, version: '1.0.0', category: 'advertising', consent: null, description: name, settingsSchema: {}, secretSettings: [],
    identifiers: null, nativeSchema, batch: { maxEvents: 10 },
    buildRequests: ({ items }) => [{ method: 'POST', url: 'https://api.test/events', headers: {}, body: JSON.stringify(items.map((i) => i.native.fields)), eventIds: items.map((i) => i.eventId) }],
    classifyResponse: () => ({ outcome: 'success' }),
  };
  return { plugin: p, folder: name, validateSettings: () => [] };
}

const event: NormalizedEvent = {
  event: { name: 'lead_created', id: 'L-1', exchange_rate: 1 },
  context: { environment: 'prod', data_source: 'crm' },
  products: [], shipping: [], payments: [], coupons: [], cookies: [],
  consent: { analytics: true, personalization: true, marketing: true },
};

describe('previewEvent and native schemas', () => {
  it('a refused rule output is build_failed for that destination only', async () => {
    const schema = { type: 'object', required: ['event_name'], properties: { event_name: { enum: ['lead', 'signup'] } } };
    const plugins: PluginRegistry = new Map([['strict', plugin('strict', schema)], ['loose', plugin('loose')]]);
    const rules = createRuleSet('', ['strict', 'loose'].map((destination) => ({
      file: `${destination}.json`, destination, scriptId: null, disabled: [],
      rules: [{ id: `${destination}.lead`, event: 'lead_created', output: { event_name: 'Lead' } }],
    })));
    const destinations = ['strict', 'loose'].map((type) => ({ id: `d-${type}`, type, name: type, enabled: true, settings: {} }) as unknown as DestinationRecord);
    const out = await previewEvent({ plugins, rules: () => rules, pool: null }, {
      account: { scriptId: 'AB12CD34', country: 'RO', host: 'https://shop.example' }, destinations, event, eventId: 'L-1', receivedAt: NOW, now: NOW,
    });
    expect(out.map((d) => [d.type, d.status, d.reason])).to.deep.equal([['strict', 'skipped', 'build_failed'], ['loose', 'would_send', undefined]]);
    expect(out[0].message).to.equal('strict: rule strict.lead produced a native event the strict schema refuses (/event_name: must be equal to one of the allowed values: ["lead","signup"]); nothing sent');
  });
});

describe('previewEvent and masked settings', () => {
  it('masks each settings object as it is, and a new settings object (an edited destination) anew', async () => {
    const secret: LoadedPlugin = plugin('secret');
    secret.plugin = {
      ...secret.plugin, secretSettings: ['api_secret'],
      buildRequests: ({ settings, items }) => [{ method: 'POST', url: `https://api.test/events?k=${String(settings.api_secret)}&p=${String(settings.pixel)}`, headers: {}, body: '{}', eventIds: items.map((i) => i.eventId) }],
    };
    const plugins: PluginRegistry = new Map([['secret', secret]]);
    const rules = createRuleSet('', [{ file: 'secret.json', destination: 'secret', scriptId: null, disabled: [], rules: [{ id: 'secret.lead', event: 'lead_created', output: { event_name: 'Lead' } }] }]);
    const preview = async (settings: Record<string, unknown>) => (await previewEvent({ plugins, rules: () => rules, pool: null }, {
      account: { scriptId: 'AB12CD34', country: 'RO', host: null },
      destinations: [{ id: 'd-secret', type: 'secret', name: 'secret', enabled: true, settings } as unknown as DestinationRecord],
      event, eventId: 'L-1', receivedAt: NOW, now: NOW,
    }))[0].requests[0].url;
    const stored = { api_secret: 's3cr3t', pixel: 'P1' };
    expect(await preview(stored)).to.equal('https://api.test/events?k=****&p=P1');
    expect(await preview(stored)).to.equal('https://api.test/events?k=****&p=P1');
    expect(stored).to.deep.equal({ api_secret: 's3cr3t', pixel: 'P1' });
    expect(await preview({ api_secret: 'other', pixel: 'P2' })).to.equal('https://api.test/events?k=****&p=P2');
    expect(await preview({ api_secret: '', pixel: 'P3' })).to.equal('https://api.test/events?k=&p=P3');
  });
});
