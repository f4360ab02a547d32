// A rule cannot freeze every tenant: evaluation has a step budget (operations, plus the
// elements merge and the characters cat build), one per event and destination shared by
// every rule. Three nested `some` over 300-element literal arrays (27 million steps) and a
// `reduce` that doubles with `merge` are stopped; so are several rules that each stay under
// the budget but together pass it, ending in a visible skip reason for that destination only.
import { expect } from 'chai';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyRules } from '../../src/rules/apply-rules.ts';
import { evaluate, EVALUATION_BUDGET, RuleBudgetError } from '../../src/rules/json-logic.ts';
import { checkExpression } from '../../src/rules/check-expression.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { createDestinationService } from '../../src/destinations/destination-service.ts';
import { startTestApp, tempDir, waitFor, type TestApp } from '../helpers/test-app.ts';
import { checkout } from '../delivery/delivery-fixture.ts';
import { shippedFolders } from '../helpers/shipped-folders.ts';

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
/** 300 × 300 × 300 comparisons, none true until the very end. */
const CUBE = { some: [range(300), { some: [range(300), { some: [range(300), { '==': [{ var: '' }, -1] }] }] }] };
/** An accumulator that doubles on every element: 2^1000 elements if nothing stopped it. */
const DOUBLING = { reduce: [range(1000), { merge: [{ var: 'accumulator' }, { var: 'accumulator' }] }, [1]] };
/** ~302 steps per product: 151,000 for 500 products, under EVALUATION_BUDGET on its own. */
const PER_PRODUCT = { some: [{ var: 'products' }, { some: [range(60), { '==': [{ var: '' }, -1] }] }] };
/** Three rules of one event that each stay under the budget and together pass it. */
const HEAVY_RULES = [1, 2, 3].map((i) => ({ id: `heavy.${i}`, event: 'checkout_completed', when: { '!': PER_PRODUCT }, output: { name: `heavy_${i}` } }));
const products = (n: number) => range(n).map((i) => ({
  id: `SKU-${i}`, name: `Item ${i}`, price_base: 1, price: 1, quantity: 1, category: 'Kitchen', tax_included: true, tax_percent: 19,
}));

describe('rules: evaluation budget', function () {
  this.timeout(20_000);

  it('both runaway rules pass the load checks but are stopped by the budget', () => {
    expect(checkExpression(CUBE, '/w')).to.deep.equal([]);
    expect(checkExpression(DOUBLING, '/w')).to.deep.equal([]);
    // Steps alone (no deadline), so the message does not depend on how loaded the machine is.
    expect(() => evaluate(CUBE, {}, { left: EVALUATION_BUDGET })).to.throw(RuleBudgetError, `exceeded the budget of ${EVALUATION_BUDGET} steps`);
    expect(() => evaluate(DOUBLING, {})).to.throw(RuleBudgetError);
    expect(evaluate({ merge: [[1], [2, 3]] }, {})).to.deep.equal([1, 2, 3]);
    expect(evaluate({ cat: ['a', null, 1] }, {})).to.equal('a1');
  });

  it('holds when a second copy of the module is loaded (a CommonJS or re-imported instance shares the json-logic registry)', async () => {
    // A different URL is a different module instance: it must neither re-register the
    // operations nor leave merge and cat counting against a budget nobody sets.
    const copy = await import(`../../src/rules/json-logic.ts?copy=${Date.now()}`);
    expect(copy.RuleBudgetError).to.equal(RuleBudgetError);
    expect(() => copy.evaluate(DOUBLING, {})).to.throw(RuleBudgetError);
    expect(() => evaluate(DOUBLING, {})).to.throw(RuleBudgetError);
    expect(() => evaluate(CUBE, {})).to.throw(RuleBudgetError);
    expect(evaluate({ merge: [[1], [2, 3]] }, {})).to.deep.equal([1, 2, 3]);
  });

  it('applyRules stops at the rule that ran the shared budget out; no later rule runs', () => {
    const r = applyRules([
      { id: 'runaway', event: '*', when: CUBE, output: { name: 'never' } },
      { id: 'fine', event: '*', output: { name: 'ok' } },
    ], { event: { name: 'lead_created' } } as never);
    expect(r.overBudget).to.deep.equal(['runaway']);
    expect(r.events).to.deep.equal([]);
    // The steps run out first; on a machine slow enough, the deadline that backs them.
    expect(r.warnings[0]).to.match(/^rule runaway: "when" failed \(evaluation (exceeded the budget|ran past the 250 ms)/);
  });

  it('one budget covers every rule of the event: rules each under it are stopped once together they pass it', () => {
    const data = { event: { name: 'checkout_completed' }, products: products(500) } as never;
    // Each expression alone fits the budget...
    for (const rule of HEAVY_RULES) expect(() => evaluate(rule.when, data)).not.to.throw();
    // ...but the second rule's `when` finds most of it spent by the first.
    const r = applyRules(HEAVY_RULES, data);
    expect(r.overBudget).to.deep.equal(['heavy.2']);
    expect(r.considered).to.deep.equal(['heavy.1', 'heavy.2']);
    // With fewer products all three fit.
    expect(applyRules(HEAVY_RULES, { ...(data as object), products: products(100) } as never).events).to.have.length(3);
  });

  describe('through the test endpoint', () => {
    let s: TestApp;
    let rulesDir: string;
    before(async () => {
      rulesDir = tempDir('tl-budget-rules-');
      cpSync(shippedFolders().rulesDir, rulesDir, { recursive: true });
      s = await startTestApp({ RULES_DIR: rulesDir }, { watchRules: true });
    });
    after(async () => {
      await s.close();
      rmSync(rulesDir, { recursive: true, force: true });
    });

    it('the destination whose rules pass the budget together is skipped with rule_budget_exceeded; the event\'s other destinations still get it', async () => {
      const account = await s.account({ host: 'https://shop.example' });
      const destinations = createDestinationService(s.running.store, s.running.plugins);
      await destinations.add(account.scriptId, 'ga4', { measurement_id: 'G-BUDGET1', api_secret: 's' });
      await destinations.add(account.scriptId, 'webhook', { url: 'https://hooks.example/in', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' });
      mkdirSync(join(rulesDir, 'accounts', account.scriptId), { recursive: true });
      writeFileSync(join(rulesDir, 'accounts', account.scriptId, 'ga4.json'), JSON.stringify({
        destination: 'ga4', rules: [...HEAVY_RULES, { id: 'ga4.purchase', disabled: true }],
      }));
      expect(await waitFor(() => s.running.rules.current().rulesFor(account.scriptId, 'ga4').some((r) => r.id === 'heavy.3'), 5_000)).to.equal(true);
      const r = await s.post(INTAKE_PATHS.test, checkout('ORD-BUDGET', { event: { name: 'checkout_completed', id: 'ORD-BUDGET', value: 500, currency: 'EUR' }, products: products(500) }), { account });
      const byType = Object.fromEntries(r.body.preview.map((d: { type: string }) => [d.type, d]));
      expect(byType.ga4, String(r.body.errors?.[0])).to.include({ status: 'skipped', reason: 'rule_budget_exceeded' });
      expect(byType.ga4.message).to.contain('rule heavy.2 was stopped');
      expect(byType.webhook).to.include({ status: 'would_send' });
    });
  });
});
