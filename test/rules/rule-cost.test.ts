// The static cost bound: a rule file whose rules for one event may together pass the
// evaluation budget they share is refused when checked (loading, `rules check`, the admin
// API's check and publish), naming the file, the costliest rule and the event; the shipped
// plugin defaults are far below it, and the bound is never below what evaluation spends.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadRules } from '../../src/rules/load-rules.ts';
import { COST_ASSUMPTIONS, ruleFileCostProblems, ruleStepBound } from '../../src/rules/rule-cost.ts';
import { evaluate, EVALUATION_BUDGET } from '../../src/rules/json-logic.ts';
import type { RuleSpec } from '../../src/rules/types.ts';
import { tempDir } from '../helpers/test-server.ts';
import { ROOT } from '../helpers/spawn-server.ts';
import { shippedFolders } from '../helpers/shipped-folders.ts';

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
/** 150 × 200 comparisons of a literal: 150,302 steps whatever the event, under the budget alone. */
const NEAR_BUDGET = { some: [range(150), { some: [range(200), { '==': [{ var: '' }, -1] }] }] };
const rule = (id: string, event: string | string[], when: unknown): RuleSpec => ({ id, event, when, output: { name: id } }) as RuleSpec;
/** Steps evaluate() spends on `logic` with `data`. */
function spent(logic: unknown, data: unknown): number {
  const budget = { left: Number.MAX_SAFE_INTEGER };
  evaluate(logic, data, budget);
  return Number.MAX_SAFE_INTEGER - budget.left;
}

describe('rules: static cost bound', function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(() => {
    dir = tempDir('tl-rule-cost-');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a file whose rules for one event together pass the budget, naming the file, the costliest rule and the event', () => {
    const cheap = rule('cheap', 'checkout_completed', { '==': [1, 1] });
    writeFileSync(join(dir, 'webhook.json'), JSON.stringify({
      destination: 'webhook', rules: [cheap, rule('a', 'checkout_completed', NEAR_BUDGET), rule('b', ['lead_created', 'checkout_completed'], NEAR_BUDGET)],
    }));
    const r = loadRules(dir, { pluginsDir: join(dir, 'none'), displayBase: dir });
    expect(r.ok).to.equal(false);
    if (r.ok) return;
    expect(r.errors).to.have.length(1);
    expect(r.errors[0]).to.include({ file: 'webhook.json', path: '/rules/1' });
    expect(r.errors[0].message).to.match(/^RULE_COST_TOO_HIGH: one "checkout_completed" event may cost these 3 rules up to 300,9\d\d evaluation steps, more than the 200,000/);
  });

  it('counts only the rules one event can run: the same rules for different events pass', () => {
    writeFileSync(join(dir, 'webhook.json'), JSON.stringify({
      destination: 'webhook', rules: [rule('a', 'checkout_completed', NEAR_BUDGET), rule('b', 'lead_created', NEAR_BUDGET)],
    }));
    expect(loadRules(dir, { pluginsDir: join(dir, 'none') }).ok).to.equal(true);
    // A `*` rule counts for every event.
    writeFileSync(join(dir, 'webhook.json'), JSON.stringify({
      destination: 'webhook', rules: [rule('a', 'checkout_completed', NEAR_BUDGET), rule('b', '*', NEAR_BUDGET)],
    }));
    expect(loadRules(dir, { pluginsDir: join(dir, 'none') }).ok).to.equal(false);
  });

  it('refuses the issue\'s file: hundreds of rules each just under the old per-expression budget', () => {
    const rules = range(440).map((i) => rule(`r${i}`, 'checkout_completed', NEAR_BUDGET));
    const text = JSON.stringify({ destination: 'webhook', rules });
    expect(Buffer.byteLength(text)).to.be.below(1024 * 1024);
    const [problem] = ruleFileCostProblems(rules);
    expect(problem.message).to.contain('these 440 rules up to 66,');
  });

  it('a reduce whose accumulator doubles, or loops over loops of event arrays, cannot be bounded under the budget', () => {
    const doubling = { reduce: [range(1000), { merge: [{ var: 'accumulator' }, { var: 'accumulator' }] }, [1]] };
    expect(ruleFileCostProblems([rule('d', '*', doubling)])[0].message).to.match(/^RULE_COST_TOO_HIGH: any event may cost this rule/);
    const nested = { some: [{ var: 'products' }, { some: [{ var: 'categories' }, { some: [{ var: 'tags' }, { '==': [{ var: '' }, 1] }] }] }] };
    expect(ruleFileCostProblems([rule('n', '*', nested)])).to.have.length(1);
    // One loop over the products of an ordinary size is nowhere near it.
    expect(ruleFileCostProblems([rule('m', '*', { map: [{ var: 'products' }, { object: ['id', { var: 'id' }] }] })])).to.deep.equal([]);
  });

  it('is never below what evaluation spends, within the documented assumptions', () => {
    const n = COST_ASSUMPTIONS.arrayElements;
    const products = range(n).map((i) => ({ id: `SKU-${i}`, name: 'Mug', price: 2.5, quantity: 2, category: 'Kitchen' }));
    const data = { event: { name: 'checkout_completed', id: 'ORD-1', value: 500, currency: 'EUR' }, products, coupons: products, user: {}, cookies: [] };
    const samples: unknown[] = [
      NEAR_BUDGET,
      { reduce: [{ var: 'products' }, { merge: [{ var: 'accumulator' }, [{ var: 'current.id' }]] }, []] },
      { reduce: [range(50), { cat: [{ var: 'accumulator' }, 'abcdefghij'] }, ''] },
      { map: [{ merge: [{ var: 'products' }, { var: 'coupons' }] }, { cat: [{ var: 'id' }, '-', { var: 'name' }] }] },
      { missing_some: [1, ['event.id', 'event.value', 'user.email']] },
      { if: [{ all: [{ var: 'products' }, { '>': [{ var: 'price' }, 0] }] }, { sum_items: [{ var: 'products' }] }, null] },
    ];
    for (const logic of samples) expect(ruleStepBound(rule('s', '*', logic))).to.be.at.least(spent(logic, data));
    // The plugins' own rules, on an event with that many products.
    const { pluginsDir } = shippedFolders();
    for (const name of readdirSync(pluginsDir)) {
      let file: { rules: RuleSpec[] };
      try {
        file = JSON.parse(readFileSync(join(pluginsDir, name, 'rules.json'), 'utf8'));
      } catch {
        continue;
      }
      expect(ruleFileCostProblems(file.rules), name).to.deep.equal([]);
      for (const r of file.rules) {
        const used = [r.when, ...Object.values(r.output)].filter((e) => e !== undefined).reduce((s: number, e) => s + spent(e, data), 0);
        expect(ruleStepBound(r), r.id).to.be.at.least(used).and.below(EVALUATION_BUDGET / 10);
      }
    }
  });

  it('`rules check` names the file and path; the shipped rules and plugin defaults pass', async () => {
    mkdirSync(join(dir, 'accounts', 'AB12CD34'), { recursive: true });
    writeFileSync(join(dir, 'accounts', 'AB12CD34', 'webhook.json'), JSON.stringify({
      destination: 'webhook', rules: [rule('a', '*', NEAR_BUDGET), rule('b', 'lead_created', NEAR_BUDGET)],
    }));
    const bad = await check({ RULES_DIR: dir });
    expect(bad.code).to.equal(1);
    expect(bad.stdout + bad.stderr).to.match(/accounts\/AB12CD34\/webhook\.json: \/rules\/0: RULE_COST_TOO_HIGH: one "lead_created" event/);
    const shipped = await check({ RULES_DIR: shippedFolders().rulesDir, PLUGINS_DIR: shippedFolders().pluginsDir });
    expect(shipped.stdout + shipped.stderr, shipped.stderr).to.match(/^OK: /);
  });
});

function check(vars: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env, DATABASE_URL: '', PORT: '', PUBLIC_BASE_URL: '', RULES_DIR: '', PLUGINS_DIR: '', ...vars };
  return new Promise((resolve) => {
    execFile(process.execPath, [join(ROOT, 'src/cli/bin.mjs'), 'rules', 'check'], { cwd: ROOT, env, encoding: 'utf8' }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}
