// Mapping and request building only read what they are given: rule outputs share the
// normalised event's objects instead of copying them, and plugins build bodies around them.
// Every shipped plugin, its shipped rules, items deep-frozen: the same requests, nothing thrown.
import { expect } from 'chai';
import { SPEC_EVENT_NAMES } from '../../src/accounts/types.ts';
import { buildRequestsFor } from '../../src/delivery/build-requests-for.ts';
import type { ClaimedDelivery } from '../../src/delivery/types.ts';
import type { PluginRegistry } from '../../src/destinations/load-plugins.ts';
import type { OutgoingItem } from '../../src/destinations/types.ts';
import { planEvents } from '../../src/pipeline/plan-event.ts';
import { loadRules } from '../../src/rules/load-rules.ts';
import type { RuleSet } from '../../src/rules/rule-set.ts';
import type { NormalizedEvent } from '../../src/schema/types.ts';
import { validateEvent } from '../../src/schema/validate-event.ts';
import type { DestinationRecord } from '../../src/store/types.ts';
import { checkout, SETTINGS } from '../delivery/delivery-fixture.ts';
import { PLUGINS_DIR, shippedPlugins } from '../helpers/shipped-plugins.ts';
import { shippedFolders } from '../helpers/shipped-folders.ts';

const NOW = 1_700_000_100_000;
const ACCOUNT = { scriptId: 'READ0001', country: 'RO', host: 'https://shop.example.com' };
/**
 * Each plugin's own example settings (its example-settings.ts), so every destination is covered
 * with nothing named here; beyond them, settings that take a plugin down a longer path.
 */
const MORE_SETTINGS: Record<string, Record<string, unknown>> = {
  // Cart data: the products become the conversion's items.
  'google-ads': { merchant_id: '556677', feed_country_code: 'RO', feed_language_code: 'ro' },
};

const VARIANTS: Record<string, unknown>[] = [
  {},
  { consent: { analytics: true, marketing: false, personalization: false } },
  {
    context: {
      environment: 'prod', data_source: 'website', user_agent: 'Mozilla/5.0 test', overide_ip: '203.0.113.7', referrer_url: 'https://search.example/',
      url: 'https://shop.example.com/thanks?gclid=Cj0KCQ&fbclid=IwAR1&ttclid=E.C.P.1&msclkid=ms1&epik=ep1&rdt_cid=rd1&ScCid=sc1&li_fat_id=li1',
      landing_url: 'https://shop.example.com/?utm_source=news&email=buyer@example.com',
    },
  },
  {
    cookies: [
      { name: '_ga', value: 'GA1.1.1234567890.1700000000' }, { name: '_ga_TEST123', value: 'GS1.1.1700000000.5.1.1700000100.0.0.0' },
      { name: '_fbc', value: 'fb.1.1700000000000.IwAR1' }, { name: '_ttp', value: 'ttp-1' }, { name: '_uetmsclkid', value: '_uetms1' },
    ],
  },
];

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  }
  return v;
}

describe('mapping and request building leave their inputs as they were', () => {
  let plugins: PluginRegistry;
  let rules: RuleSet;
  let destinations: DestinationRecord[];
  const ctx = { approvedEvents: new Set(SPEC_EVENT_NAMES), defaultTaxRate: 19, host: null };
  const events = (): NormalizedEvent[] =>
    VARIANTS.map((over, i) => validateEvent(checkout(`R-${i}`, over), ctx).event as NormalizedEvent);

  before(async () => {
    plugins = await shippedPlugins();
    const loaded = loadRules(shippedFolders().rulesDir, { pluginsDir: PLUGINS_DIR });
    if (!loaded.ok) throw new Error('the shipped rules do not load');
    rules = loaded.ruleSet;
    destinations = [...plugins.keys()].map((type) => ({
      id: `dst_${type}`, scriptId: ACCOUNT.scriptId, type, name: type, enabled: true, settings: { ...SETTINGS[type](`https://${type}.test`), ...MORE_SETTINGS[type] },
    }) as unknown as DestinationRecord);
  });

  async function plan(list: NormalizedEvent[], freeze: boolean) {
    const subjects = list.map((event, i) => ({ account: ACCOUNT, destinations, event, eventId: `R-${i}`, receivedAt: NOW - 60_000 }));
    const plans = await planEvents({ plugins, rules, pool: null }, subjects, { now: NOW, build: false });
    return destinations.map((d, k) => {
      const claimed: ClaimedDelivery[] = [];
      plans.forEach((p, i) => {
        const one = p[k];
        expect(one.status, `${d.type}, event ${i}: ${'message' in one ? one.message : ''}`).to.not.equal('failed');
        if (one.status !== 'ready') return;
        for (const item of one.items) {
          claimed.push({
            id: i, eventSeq: i, scriptId: ACCOUNT.scriptId, destinationId: d.id, destinationType: d.type, eventId: item.eventId,
            attempts: 0, receivedAt: 0, item: freeze ? deepFreeze<OutgoingItem>(item) : item,
          });
        }
      });
      const built = buildRequestsFor(plugins.get(d.type)!.plugin, d.type, d.settings, claimed, NOW);
      return { type: d.type, items: claimed.length, requests: built.units.map((u) => u.request), unsendable: built.unsendable.map((u) => u.message) };
    });
  }

  it('builds the same requests from a frozen event and frozen items as from writable ones, for every shipped plugin', async () => {
    const writable = await plan(events(), false);
    const frozen = await plan(events().map((e) => deepFreeze(e)), true);
    expect(frozen).to.deep.equal(writable);
    for (const d of writable) {
      expect(d.items, `${d.type} maps checkout_completed`).to.be.greaterThan(0);
      expect(d.requests, `${d.type} builds requests`).to.not.be.empty;
      expect(d.unsendable, d.type).to.deep.equal([]);
    }
  });
});
