// The budget counts work, not calls: an operation that serialises, scans or walks pays per
// 16 characters or per element, no value a rule builds passes 64 KiB, no native event
// passes 1 MiB, and a wall-clock deadline backs the steps. The rules below passed `rules
// check` and cost seconds of CPU per event when `to_string` was one step however much it
// serialised.
import { expect } from 'chai';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyRules, MAX_NATIVE_EVENT_CHARS } from '../../src/rules/apply-rules.ts';
import { checkExpression } from '../../src/rules/check-expression.ts';
import {
  evaluate, EVALUATION_BUDGET, MAX_VALUE_CHARS, RuleBudgetError, RuleValueTooLargeError, type EvaluationBudget,
} from '../../src/rules/json-logic.ts';
import { ruleFileCostProblems, ruleStepBound } from '../../src/rules/rule-cost.ts';
import type { RuleSpec } from '../../src/rules/types.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { createDestinationService } from '../../src/destinations/destination-service.ts';
import { startTestApp, tempDir, waitFor, type TestApp } from '../helpers/test-app.ts';
import { checkout } from '../delivery/delivery-fixture.ts';
import { shippedFolders } from '../helpers/shipped-folders.ts';

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
/** The accumulator's escaping doubles the string on every element: ~201 M characters for 26. */
const DOUBLE = { '!': { reduce: [range(26), { to_string: { merge: { var: 'accumulator' } } }, '\\'] } };
/** The whole rule data as JSON. */
const ALL_DATA = { to_string: { var: [] } };
const rule = (id: string, when: unknown, output: Record<string, unknown> = { name: id }): RuleSpec => ({ id, event: '*', when, output }) as RuleSpec;
/** A large event, as one tenant may send (~465 KB of products). */
const bigData = () => ({
  event: { name: 'checkout_completed', id: 'ORD-BIG' },
  products: range(2_000).map((i) => ({
    id: `SKU-${i}`, name: `Product number ${i} ${'x'.repeat(150)}`, price_base: 1, price: 1, quantity: 1, category: 'Kitchen', tax_included: true, tax_percent: 19,
  })),
  user: {}, cookies: [],
});

/** Steps evaluate() spends on `logic` with `data` (unbounded budget, no deadline), or what it threw. */
function spent(logic: unknown, data: unknown): { steps: number; error?: unknown } {
  const budget: EvaluationBudget = { left: Number.MAX_SAFE_INTEGER };
  try {
    evaluate(logic, data, budget);
    return { steps: Number.MAX_SAFE_INTEGER - budget.left };
  } catch (error) {
    return { steps: Number.MAX_SAFE_INTEGER - budget.left, error };
  }
}

describe('rules: the budget counts work', function () {
  this.timeout(30_000);

  it('a doubling to_string accumulator passes the load checks but stops at the value cap, having paid for what it built', () => {
    expect(checkExpression(DOUBLE, '/when')).to.deep.equal([]);
    const r = spent(DOUBLE, {});
    expect(r.error).to.be.instanceOf(RuleValueTooLargeError);
    expect(String((r.error as Error).message)).to.contain('65,536 characters');
    // Each to_string paid per 16 characters: the doubling pays thousands of steps, not 26.
    expect(r.steps).to.be.within(MAX_VALUE_CHARS / 16, EVALUATION_BUDGET);
    // Ten such rules for one event: each fails on its own ("when" failed), none runs long.
    const result = applyRules(range(10).map((i) => rule(`evil.double${i}`, DOUBLE)), { event: { name: 'lead_created' } } as never);
    expect(result.events).to.deep.equal([]);
    expect(result.warnings).to.have.length.greaterThan(0);
    expect(result.warnings[0]).to.match(/^rule evil\.double0: "when" failed \(the JSON text would be longer than 65,536 characters\)/);
  });

  it('the static bound adds the same costs: the doubling rule (168 steps when to_string was one) is refused when checked', () => {
    const bound = ruleStepBound(rule('evil.double0', DOUBLE));
    expect(bound).to.be.at.least(spent(DOUBLE, {}).steps).and.above(EVALUATION_BUDGET);
    expect(ruleFileCostProblems([rule('evil.double0', DOUBLE)])[0].message).to.match(/^RULE_COST_TOO_HIGH: any event may cost this rule/);
    // Serialising the rule data is bounded by what the bound assumes of an event: a few fit, a file of many does not.
    expect(ruleFileCostProblems(range(20).map((i) => rule(`copy${i}`, ALL_DATA)))).to.deep.equal([]);
    expect(ruleFileCostProblems(range(60).map((i) => rule(`copy${i}`, ALL_DATA)))[0].message).to.match(/^RULE_COST_TOO_HIGH/);
  });

  it('to_string of the whole rule data stops at the cap on a large event, and 660 such calls run out of the budget', () => {
    const data = bigData();
    expect(JSON.stringify(data).length).to.be.above(400_000);
    const one = spent(ALL_DATA, data);
    expect(one.error).to.be.instanceOf(RuleValueTooLargeError);
    expect(one.steps).to.be.at.least(MAX_VALUE_CHARS / 16);
    // 660 calls, each serialising a 30 KB event whole: the shared budget ends it after a few dozen.
    const medium = { ...data, products: data.products.slice(0, 100) };
    const copies = { or: range(660).map(() => ({ '!': ALL_DATA })) };
    expect(spent(ALL_DATA, medium).error).to.equal(undefined);
    const r = applyRules([rule('evil.copies', copies), rule('later', undefined)], medium as never);
    expect(r.overBudget).to.deep.equal(['evil.copies']);
    expect(r.warnings.join('\n')).to.match(/failed \(evaluation (exceeded the budget|ran past the 250 ms)/, r.warnings.join('\n'));
  });

  it('charges each operation by the characters it produces or scans and the elements it walks', () => {
    const long = 'A'.repeat(16_000);
    const list = range(5_000);
    const object = Object.fromEntries(range(3_000).map((i) => [`k${i}`, i]));
    const cookies = range(4_000).map((i) => ({ name: `c${i}`, value: 'v' }));
    const data = { long, list, object, cookies, items: range(5_000).map(() => ({ price: 1, quantity: 1 })) };
    const cases: Array<[string, unknown, number]> = [
      ['to_string of an array', { to_string: { var: 'list' } }, 5_000],
      ['lower', { lower: { var: 'long' } }, 1_000],
      ['upper', { upper: { var: 'long' } }, 1_000],
      ['substr', { substr: [{ var: 'long' }, 1, 2] }, 1_000],
      ['cat of an array', { cat: [{ var: 'list' }] }, 5_000],
      ['in a text', { in: ['B', { var: 'long' }] }, 1_000],
      ['in a list', { in: [-1, { var: 'list' }] }, 5_000],
      ['sum', { sum: [{ var: 'list' }] }, 5_000],
      ['sum_items', { sum_items: [{ var: 'items' }] }, 5_000],
      ['omit', { omit: [{ var: 'object' }, 'k1'] }, 3_000],
      ['pick', { pick: [{ var: 'object' }, range(2_000).map((i) => `k${i}`)] }, 2_000],
      ['cookie', { cookie: 'c3999' }, 4_000],
    ];
    for (const [what, logic, atLeast] of cases) {
      const r = spent(logic, data);
      expect(r.error, what).to.equal(undefined);
      expect(r.steps, what).to.be.at.least(atLeast);
      // ...and the static bound, with the event's sizes it assumes, still covers a normal event.
      expect(ruleStepBound(rule('s', logic)), what).to.be.at.least(spent(logic, { long: 'x'.repeat(2_000), list: range(100), cookies: cookies.slice(0, 100) }).steps);
    }
  });

  it('no operation builds text past the cap: cat, lower and to_string of large inputs fail instead', () => {
    const data = { long: 'a'.repeat(MAX_VALUE_CHARS + 1), half: 'b'.repeat(40_000) };
    for (const logic of [{ cat: [{ var: 'half' }, { var: 'half' }] }, { lower: { var: 'long' } }, { to_string: [[{ var: 'half' }, { var: 'half' }]] }]) {
      expect(spent(logic, data).error, JSON.stringify(logic)).to.be.instanceOf(RuleValueTooLargeError);
    }
    // Up to the cap they work, with the answers json-logic gives.
    expect(evaluate({ cat: [{ var: 'half' }, 'x'] }, data)).to.have.length(40_001);
    expect(evaluate({ to_string: { var: 'x' } }, { x: [1, 'a', null, { b: [true], u: undefined }] })).to.equal('[1,"a",null,{"b":[true]}]');
    expect(evaluate({ cat: [[1, [2, null], 'x'], '-'] }, {})).to.equal('1,2,,x-');
    expect(evaluate({ substr: ['jsonlogic', -5, -2] }, {})).to.equal('log');
  });

  it('a deadline backs the steps: an evaluation past it stops at the next look at the clock, and stays stopped', () => {
    const budget: EvaluationBudget = { left: Number.MAX_SAFE_INTEGER, deadline: performance.now() - 1 };
    const loop = { some: [range(3_000), { '==': [{ var: '' }, -1] }] };
    expect(() => evaluate(loop, {}, budget)).to.throw(RuleBudgetError, /ran past the 250 ms/);
    expect(() => evaluate({ '==': [1, 1] }, {}, budget)).to.throw(RuleBudgetError);
    // A fresh budget has a deadline ahead of it: the same loop runs.
    expect(evaluate(loop, {})).to.equal(false);
  });

  it('a native event larger than 1 MiB is refused with a warning; the rule\'s other events and other rules are unaffected', () => {
    const data = { event: { name: 'x' }, huge: range(40_000).map((i) => `value-${i}-${'z'.repeat(20)}`) } as never;
    const r = applyRules([rule('too.big', undefined, { name: 'big', 'params.all': { var: 'huge' } }), rule('fine', undefined)], data);
    expect(r.events.map((e) => e.ruleId)).to.deep.equal(['fine']);
    expect(r.warnings).to.deep.equal([`rule too.big: its native event is larger than ${MAX_NATIVE_EVENT_CHARS / 1_048_576} MiB as JSON; no event from this rule`]);
  });

  describe('two tenants through the test endpoint', () => {
    let s: TestApp;
    let rulesDir: string;
    before(async () => {
      rulesDir = tempDir('tl-work-rules-');
      cpSync(shippedFolders().rulesDir, rulesDir, { recursive: true });
      s = await startTestApp({ RULES_DIR: rulesDir }, { watchRules: true });
    });
    after(async () => {
      await s.close();
      rmSync(rulesDir, { recursive: true, force: true });
    });

    it('one tenant\'s rules serialising a large event fail on their own; the other tenant\'s preview is as it was', async () => {
      const destinations = createDestinationService(s.running.store, s.running.plugins);
      const evil = await s.account({ host: 'https://evil.example' });
      const other = await s.account({ host: 'https://shop.example' });
      for (const a of [evil, other]) {
        await destinations.add(a.scriptId, 'webhook', { url: 'https://hooks.example/in', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' });
      }
      mkdirSync(join(rulesDir, 'accounts', evil.scriptId), { recursive: true });
      writeFileSync(join(rulesDir, 'accounts', evil.scriptId, 'webhook.json'), JSON.stringify({
        destination: 'webhook', rules: range(25).map((i) => rule(`evil.copy${i}`, { '!!': [ALL_DATA] })),
      }));
      expect(await waitFor(() => s.running.rules.current().rulesFor(evil.scriptId, 'webhook').some((r) => r.id === 'evil.copy24'), 5_000)).to.equal(true);
      const before = await s.post(INTAKE_PATHS.test, checkout('ORD-OTHER-1'), { account: other });
      const large = bigData();
      const attacked = await s.post(INTAKE_PATHS.test, checkout('ORD-EVIL', { products: large.products.slice(0, 1_000) }), { account: evil });
      const after = await s.post(INTAKE_PATHS.test, checkout('ORD-OTHER-2'), { account: other });
      expect(attacked.status, JSON.stringify(attacked.body).slice(0, 500)).to.equal(200);
      const mine = attacked.body.preview.find((d: { type: string }) => d.type === 'webhook');
      expect(mine, JSON.stringify(attacked.body).slice(0, 800)).not.to.equal(undefined);
      // Each rule stopped at the cap (or, once the shared budget was spent, the destination was skipped).
      expect(mine.warnings.join('\n'), JSON.stringify(mine)).to.contain('evil.copy0: "when" failed (the JSON text would be longer than 65,536 characters)');
      for (const r of [before, after]) {
        expect(r.status).to.equal(200);
        const theirs = r.body.preview.find((d: { type: string }) => d.type === 'webhook');
        expect(theirs).to.include({ status: 'would_send' });
        expect(theirs.warnings.join('\n')).not.to.contain('evil');
      }
    });
  });
});
