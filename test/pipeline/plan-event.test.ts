// The one planner preview and fan-out share: one hashed set per event and enabled destination
// type (through the pool, in one call), disabled and unknown destinations skipped with their
// reason, requests only when asked to build, and the same plan either way.
import { expect } from 'chai';
import type { LoadedPlugin, PluginRegistry } from '../../src/destinations/load-plugins.ts';
import type { DestinationPlugin } from '../../src/destinations/types.ts';
import { planEvents } from '../../src/pipeline/plan-event.ts';
import { createRuleSet } from '../../src/rules/rule-set.ts';
import type { NormalizedEvent } from '../../src/schema/types.ts';
import type { DestinationRecord } from '../../src/store/types.ts';
import type { HashPool } from '../../src/workers/pool.ts';
import type { HashItem } from '../../src/workers/hash-worker.ts';
import { hashIdentifiers, NORMALISERS, type IdentifierSpec, type Normaliser } from '../../src/identifiers/index.ts';
import { hashBatch } from '../../src/workers/hash-worker.ts';
import { sha256Hex } from '../../src/identifiers/sha256.ts';

const NOW = 1_700_000_000_000;
const IDS: IdentifierSpec = { table: { em: { from: 'email', normalise: 'email', hash: true } } };

function plugin(name: string): LoadedPlugin {
  const p: DestinationPlugin = {
    name, version: '1.0.0', category: 'advertising', consent: null, description: name, settingsSchema: {}, secretSettings: [],
    identifiers: IDS, batch: { maxEvents: 10 },
    buildRequests: ({ items }) => [{ method: 'POST', url: 'https://api.test/events', headers: {}, body: JSON.stringify(items.map((i) => i.native.fields)), eventIds: items.map((i) => i.eventId) }],
    classifyResponse: () => ({ outcome: 'success' }),
  };
  return { plugin: p, folder: name, validateSettings: () => [] };
}

const event = (id: string): NormalizedEvent => ({
  event: { name: 'lead_created', id, exchange_rate: 1 },
  context: { environment: 'prod', data_source: 'crm' },
  products: [], shipping: [], payments: [], coupons: [], cookies: [],
  consent: { analytics: true, personalization: true, marketing: true },
  user: { email: 'Jane@Example.com' },
});

const dest = (id: string, type: string, enabled = true) => ({ id, type, name: id, enabled, settings: {} }) as unknown as DestinationRecord;

describe('planEvents: one planner for preview and fan-out', () => {
  const plugins: PluginRegistry = new Map([['alpha', plugin('alpha')], ['gamma', plugin('gamma')]]);
  const rules = createRuleSet('', [{ file: 'alpha.json', destination: 'alpha', scriptId: null, disabled: [], rules: [{ id: 'alpha.lead', event: 'lead_created', output: { name: 'lead' } }] }]);
  const account = { scriptId: 'ACCT0001', country: null, host: null };

  it('hashes once per event and enabled destination type, in one pool call; skips disabled and unknown destinations', async () => {
    const calls: HashItem[][] = [];
    const pool = { hashBatch: async (items: HashItem[]) => { calls.push(items); return items.map((i) => hashIdentifiers(i.user, i.spec)); } } as unknown as HashPool;
    const destinations = [dest('a1', 'alpha'), dest('a2', 'alpha'), dest('off', 'gamma', false), dest('gone', 'beta')];
    const plans = await planEvents({ plugins, rules, pool }, [
      { account, destinations, event: event('L-1'), eventId: 'L-1', receivedAt: NOW },
      { account, destinations, event: event('L-2'), eventId: 'L-2', receivedAt: NOW },
    ], { now: NOW, build: false });
    expect(calls).to.have.length(1);
    expect(calls[0]).to.have.length(2); // two events × one enabled type (the disabled gamma is not hashed)
    for (const p of plans) {
      expect(p.map((x) => [x.destination.id, x.status, x.status === 'ready' ? null : x.reason])).to.deep.equal([
        ['a1', 'ready', null], ['a2', 'ready', null], ['off', 'skipped', 'disabled'], ['gone', 'skipped', 'plugin_missing'],
      ]);
    }
    const [a1] = plans[0];
    expect(a1.status === 'ready' && a1.items[0].identifiers).to.deep.equal(hashIdentifiers(event('L-1').user, IDS).fields);
    expect(a1.status === 'ready' && a1.requests).to.deep.equal([]);
  });

  it('builds requests only when asked, from the same items', async () => {
    const subject = { account, destinations: [dest('a1', 'alpha')], event: event('L-3'), eventId: 'L-3', receivedAt: NOW };
    const [[stored]] = await planEvents({ plugins, rules, pool: null }, [subject], { now: NOW, build: false });
    const [[built]] = await planEvents({ plugins, rules, pool: null }, [subject], { now: NOW, build: true });
    if (stored.status !== 'ready' || built.status !== 'ready') throw new Error('expected ready plans');
    expect(built.items).to.deep.equal(stored.items);
    expect(built.requests).to.have.length(1);
    expect(JSON.parse(built.requests[0].body)).to.deep.equal([{ name: 'lead' }]);
  });

  it('collects warnings unless asked not to (fan-out stores none), with the same items either way', async () => {
    // A rule output that fails to evaluate is a warning for the rule author.
    const warned = createRuleSet('', [{ file: 'alpha.json', destination: 'alpha', scriptId: null, disabled: [], rules: [
      { id: 'alpha.lead', event: 'lead_created', output: { name: 'lead' } },
      { id: 'alpha.broken', event: 'lead_created', output: { name: { nope: [] } } },
    ] }]);
    const subject = { account, destinations: [dest('a1', 'alpha')], event: event('L-4'), eventId: 'L-4', receivedAt: NOW };
    const [[full]] = await planEvents({ plugins, rules: warned, pool: null }, [subject], { now: NOW, build: false });
    const [[quiet]] = await planEvents({ plugins, rules: warned, pool: null }, [subject], { now: NOW, build: false, warnings: false });
    if (full.status !== 'ready' || quiet.status !== 'ready') throw new Error('expected ready plans');
    expect(full.warnings.some((w) => w.includes('alpha.broken'))).to.equal(true);
    expect(quiet.warnings).to.deep.equal([]);
    expect(quiet.items).to.deep.equal(full.items);
  });

  it('normalises and hashes an e-mail once per event, for its identifiers and for the user a rule reads (inline or through the pool)', async () => {
    const reading = createRuleSet('', [{ file: 'alpha.json', destination: 'alpha', scriptId: null, disabled: [], rules: [
      { id: 'alpha.lead', event: 'lead_created', output: { name: 'lead', email: { var: 'user.email' } } },
    ] }]);
    const inlinePool = { hashBatch: async (items: HashItem[], memo?: Parameters<typeof hashBatch>[1]) => hashBatch(items, memo) } as unknown as HashPool;
    // The table is `as const` for its names; its functions are looked up at each call, so one can be watched.
    const table = NORMALISERS as Record<string, Normaliser>;
    const original = table.email;
    let calls = 0;
    table.email = (raw, ctx) => {
      calls++;
      return original(raw, ctx);
    };
    try {
      for (const pool of [null, inlinePool]) {
        calls = 0;
        const [[plan]] = await planEvents({ plugins, rules: reading, pool }, [
          { account, destinations: [dest('a1', 'alpha')], event: event('L-5'), eventId: 'L-5', receivedAt: NOW },
        ], { now: NOW, build: true });
        if (plan.status !== 'ready') throw new Error('expected a ready plan');
        expect(JSON.parse(plan.requests[0].body)).to.deep.equal([{ name: 'lead', email: sha256Hex('jane@example.com') }]);
        expect(calls, pool === null ? 'inline' : 'pool').to.equal(1);
      }
    } finally {
      table.email = original;
    }
  });
});
