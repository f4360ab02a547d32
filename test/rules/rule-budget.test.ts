// A rule cannot freeze every tenant: evaluation has a step budget (operations, plus the
// elements merge and the characters cat build). Three nested `some` over 300-element
// literal arrays (27 million steps) and a `reduce` that doubles with `merge` are stopped,
// ending in a visible skip reason, and the test endpoint shows it while /healthz answers.
import { expect } from 'chai';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyRules } from '../../src/rules/apply-rules.ts';
import { evaluate, EVALUATION_BUDGET, RuleBudgetError } from '../../src/rules/json-logic.ts';
import { checkExpression } from '../../src/rules/check-expression.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { createDestinationService } from '../../src/destinations/destination-service.ts';
import { startTestApp, tempDir, waitFor, type TestApp } from '../helpers/test-app.ts';
import { ROOT } from '../helpers/spawn-server.ts';
import { checkout } from '../delivery/delivery-fixture.ts';

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
/** 300 × 300 × 300 comparisons, none true until the very end. */
const CUBE = { some: [range(300), { some: [range(300), { some: [range(300), { '==': [{ var: '' }, -1] }] }] }] };
/** An accumulator that doubles on every element: 2^1000 elements if nothing stopped it. */
const DOUBLING = { reduce: [range(1000), { merge: [{ var: 'accumulator' }, { var: 'accumulator' }] }, [1]] };

describe('rules: evaluation budget', function () {
  this.timeout(20_000);

  it('both runaway rules pass the load checks but are stopped by the budget', () => {
    expect(checkExpression(CUBE, '/w')).to.deep.equal([]);
    expect(checkExpression(DOUBLING, '/w')).to.deep.equal([]);
    expect(() => evaluate(CUBE, {})).to.throw(RuleBudgetError, `exceeded its budget of ${EVALUATION_BUDGET} steps`);
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

  it('applyRules names the rule that ran out; the other rules still produce their events', () => {
    const r = applyRules([
      { id: 'runaway', event: '*', when: CUBE, output: { name: 'never' } },
      { id: 'fine', event: '*', output: { name: 'ok' } },
    ], { event: { name: 'lead_created' } } as never);
    expect(r.overBudget).to.deep.equal(['runaway']);
    expect(r.events.map((e) => e.ruleId)).to.deep.equal(['fine']);
    expect(r.warnings[0]).to.match(/^rule runaway: "when" failed \(evaluation exceeded its budget/);
  });

  describe('through the test endpoint', () => {
    let s: TestApp;
    let rulesDir: string;
    before(async () => {
      rulesDir = tempDir('tl-budget-rules-');
      cpSync(join(ROOT, 'rules'), rulesDir, { recursive: true });
      s = await startTestApp({ RULES_DIR: rulesDir }, { watchRules: true });
    });
    after(async () => {
      await s.close();
      rmSync(rulesDir, { recursive: true, force: true });
    });

    it('the destination is skipped with rule_budget_exceeded, and /healthz keeps answering', async () => {
      const account = await s.account({ host: 'https://shop.example' });
      await createDestinationService(s.running.store, s.running.plugins).add(account.scriptId, 'ga4', { measurement_id: 'G-BUDGET1', api_secret: 's' });
      mkdirSync(join(rulesDir, 'accounts', account.scriptId), { recursive: true });
      writeFileSync(join(rulesDir, 'accounts', account.scriptId, 'ga4.json'), JSON.stringify({
        destination: 'ga4', rules: [{ id: 'runaway', event: 'checkout_completed', when: DOUBLING, output: { name: 'purchase' } }, { id: 'ga4.purchase', disabled: true }],
      }));
      expect(await waitFor(() => s.running.rules.current().rulesFor(account.scriptId, 'ga4').some((r) => r.id === 'runaway'), 5_000)).to.equal(true);
      const preview = s.post(INTAKE_PATHS.test, checkout('ORD-BUDGET'), { account });
      const health = fetch(`${s.url}/healthz`);
      const [r, h] = await Promise.all([preview, health]);
      expect(h.status).to.equal(200);
      const [ga4] = r.body.preview;
      expect(ga4).to.include({ status: 'skipped', reason: 'rule_budget_exceeded' });
      expect(ga4.message).to.contain('rule runaway was stopped');
    });
  });
});
