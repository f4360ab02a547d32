import { expect } from 'chai';
import { applyRules } from '../../src/rules/apply-rules.ts';
import type { RuleData, RuleSpec } from '../../src/rules/types.ts';

function data(over: Partial<RuleData> = {}): RuleData {
  return {
    event: { name: 'checkout_completed', id: 'ORD-1', value: 59.9, currency: 'EUR', exchange_rate: 1 },
    context: { environment: 'prod', url: 'https://shop.example/thanks' },
    products: [
      { id: 'A', name: 'Shirt', price: 19.95, quantity: 2 },
      { id: 'B', name: 'Hat', price: 20, quantity: 1, brand: null },
    ],
    shipping: [{ value: 5 }],
    payments: [],
    coupons: [],
    user: { email: 'jane@example.com' },
    consent: { analytics: true, personalization: false, marketing: true },
    cookies: [{ name: '_ga', value: 'GA1.1.111.222' }],
    attribution: { client_id: '111.222' },
    account: { script_id: 'AB12CD34', country: 'RO', host: 'https://shop.example' },
    settings: { measurement_id: 'G-TEST' },
    received_at: 1_700_000_000_123,
    ...over,
  };
}

const purchase: RuleSpec = {
  id: 'ga4.purchase',
  event: 'checkout_completed',
  output: {
    name: 'purchase',
    client_id: { var: 'attribution.client_id' },
    timestamp_micros: { ms_to_us: { var: 'received_at' } },
    'params.transaction_id': { var: 'event.id' },
    'params.value': { var: 'event.value' },
    'params.currency': { var: 'event.currency' },
    'params.coupon': { var: 'coupons.0.name' },
    'params.items': { map: [{ var: 'products' }, { object: ['item_id', { var: 'id' }, 'item_brand', { var: 'brand' }, 'price', { var: 'price' }, 'quantity', { var: 'quantity' }] }] },
    'params.gross': { sum_items: [{ var: 'products' }] },
    'params.ga': { cookie: '_ga' },
  },
};

describe('applyRules', () => {
  it('builds the native event from dot-path keys, leaving null and undefined out', () => {
    const r = applyRules([purchase], data());
    expect(r).to.deep.equal({
      events: [{
        ruleId: 'ga4.purchase',
        fields: {
          name: 'purchase',
          client_id: '111.222',
          timestamp_micros: 1_700_000_000_123_000,
          params: {
            transaction_id: 'ORD-1',
            value: 59.9,
            currency: 'EUR',
            items: [{ item_id: 'A', price: 19.95, quantity: 2 }, { item_id: 'B', price: 20, quantity: 1 }],
            gross: 59.9,
            ga: 'GA1.1.111.222',
          },
        },
      }],
      warnings: [],
      considered: ['ga4.purchase'],
      overBudget: [],
    });
  });

  it('one event may produce several native events, in rule order', () => {
    const rules: RuleSpec[] = [
      { id: 'a', event: ['lead_created', 'checkout_completed'], output: { name: 'first' } },
      { id: 'b', event: 'product_viewed', output: { name: 'never' } },
      { id: 'c', event: '*', output: { name: 'any' } },
      { id: 'd', event: 'checkout_completed', when: { '>': [{ var: 'event.value' }, 100] }, output: { name: 'big' } },
      { id: 'e', event: 'checkout_completed', when: { in: ['A', { map: [{ var: 'products' }, { var: 'id' }] }] }, output: { name: 'has_a' } },
    ];
    expect(applyRules(rules, data()).events.map((e) => [e.ruleId, e.fields.name])).to.deep.equal([
      ['a', 'first'], ['c', 'any'], ['e', 'has_a'],
    ]);
  });

  it('`when` uses json-logic truthiness (an empty array is false)', () => {
    const rule: RuleSpec = { id: 'p', event: '*', when: { var: 'payments' }, output: { name: 'x' } };
    expect(applyRules([rule], data()).events).to.deep.equal([]);
    expect(applyRules([rule], data({ payments: [{ value: 1 }] })).events).to.have.length(1);
  });

  it('a rule that throws yields a warning and no event; the others still run', () => {
    const rules: RuleSpec[] = [
      { id: 'bad-when', event: '*', when: { nope: [] }, output: { name: 'x' } },
      { id: 'bad-output', event: '*', output: { name: 'y', 'a.b': { object: ['k', 1, 'odd'] } } },
      { id: 'conflict', event: '*', output: { a: 'text', 'a.b': 1 } },
      { id: 'ok', event: '*', output: { name: 'fine' } },
    ];
    const r = applyRules(rules, data());
    expect(r.events).to.deep.equal([{ ruleId: 'ok', fields: { name: 'fine' } }]);
    expect(r.warnings).to.deep.equal([
      'rule bad-when: "when" failed (Unrecognized operation nope); rule skipped',
      'rule bad-output: output "a.b" failed (object takes key/value pairs; got 3 arguments); no event from this rule',
      'rule conflict: output "a.b" failed (key "a.b" conflicts with "a", which is not an object); no event from this rule',
    ]);
  });

  it('a non-finite number is left out with a warning', () => {
    const r = applyRules([{ id: 'n', event: '*', output: { name: 'x', v: { '*': [{ var: 'event.missing' }, 1000] } } }], data());
    expect(r.events).to.deep.equal([{ ruleId: 'n', fields: { name: 'x' } }]);
    expect(r.warnings).to.deep.equal(['rule n: output "v" is not a finite number; left out']);
  });

  it('outputs that are JSON data share the rule data (read-only) instead of copying it; others are copied as JSON would have them', () => {
    const d = data();
    const r = applyRules([{ id: 'c', event: '*', output: { products: { var: 'products' }, gaps: [1, { var: 'event.nothing' }] } }], d);
    expect(r.events[0].fields.products).to.equal(d.products);
    expect(r.events[0].fields.gaps).to.deep.equal([1, null]);
  });

  it('a value that is not JSON data is refused', () => {
    const r = applyRules([{ id: 'f', event: '*', output: { f: { var: 'event.name.constructor' } } }], data());
    expect(r.events).to.deep.equal([]);
    expect(r.warnings).to.deep.equal(['rule f: output "f" failed (the value is a function, not JSON data); no event from this rule']);
  });

  it('skips disabled rules', () => {
    expect(applyRules([{ id: 'x', event: '*', disabled: true, output: { name: 'x' } }], data()).events).to.deep.equal([]);
  });
});
