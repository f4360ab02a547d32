// Rules are evaluated through closures compiled once per rule object (src/rules/json-logic.ts),
// not by json-logic-js's interpreter on every event. This checks them against a fresh,
// unwrapped copy of json-logic-js with the same operations registered: every expression of
// every shipped rule, on several events, gives the same answer, and hand-written
// expressions cover each compiled form and the interpreter's edge cases.
import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { SPEC_EVENT_NAMES } from '../../src/accounts/types.ts';
import { buildRuleData } from '../../src/pipeline/rule-data.ts';
import { CUSTOM_OPERATIONS } from '../../src/rules/custom-ops.ts';
import { evaluate } from '../../src/rules/json-logic.ts';
import type { NormalizedEvent } from '../../src/schema/types.ts';
import { validateEvent } from '../../src/schema/validate-event.ts';
import { checkout } from '../delivery/delivery-fixture.ts';
import { shippedFolders } from '../helpers/shipped-folders.ts';

interface Interpreter { apply(logic: unknown, data: unknown): unknown; add_operation(name: string, fn: unknown): void; rm_operation(name: string): void }

/** json-logic-js loaded again, apart from the process's shared (wrapped) instance. */
function freshInterpreter(): Interpreter {
  const req = createRequire(import.meta.url);
  const file = req.resolve('json-logic-js');
  const cached = req.cache[file];
  delete req.cache[file];
  try {
    const fresh = req('json-logic-js') as Interpreter;
    for (const name of ['method', 'log']) fresh.rm_operation(name);
    for (const [name, fn] of Object.entries(CUSTOM_OPERATIONS)) fresh.add_operation(name, fn);
    fresh.add_operation('merge', (...args: unknown[]) => args.reduce<unknown[]>((acc, a) => acc.concat(a), []));
    fresh.add_operation('cat', (...args: unknown[]) => args.join(''));
    return fresh;
  } finally {
    if (cached) req.cache[file] = cached;
  }
}

/** Every object or array inside `node` (itself included), depth first. */
function subtrees(node: unknown, out: unknown[] = []): unknown[] {
  if (typeof node === 'object' && node !== null) {
    out.push(node);
    for (const v of Object.values(node)) subtrees(v, out);
  }
  return out;
}

/** The outcome of one evaluation: its value, or the error it threw. */
function outcome(f: () => unknown): { value?: unknown; error?: string } {
  try {
    return { value: f() };
  } catch (err) {
    return { error: String(err) };
  }
}

describe('rules: compiled evaluation matches json-logic-js', () => {
  const interpreter = freshInterpreter();
  const same = (logic: unknown, data: unknown) =>
    expect(outcome(() => evaluate(logic, data)), JSON.stringify(logic)).to.deep.equal(outcome(() => interpreter.apply(logic, data)));

  it('for every expression of every shipped rule, on several events', () => {
    const { pluginsDir } = shippedFolders();
    const files = readdirSync(pluginsDir).map((p) => join(pluginsDir, p, 'rules.json'))
      .filter((f) => { try { readFileSync(f); return true; } catch { return false; } });
    expect(files.length).to.be.greaterThan(3);
    const ctx = { approvedEvents: new Set(SPEC_EVENT_NAMES), defaultTaxRate: 19, host: null };
    const events = [
      checkout('E-1', { user: { id: 'u-1', email: 'u1@example.com' } }),
      checkout('E-2', { products: [], consent: { analytics: false, marketing: false, personalization: false } }),
      { event: { name: 'lead_created', id: 'L-1' }, context: { environment: 'prod', data_source: 'crm' } },
    ].map((body) => validateEvent(body, ctx).event as NormalizedEvent);
    const data = events.map((event) => buildRuleData({
      event, attribution: { client_id: '123.456', fbp: 'fb.1.2.3' }, account: { scriptId: 'ACCT0001', country: 'RO', host: null },
      settings: { currency: 'EUR' }, receivedAt: 1_700_000_000_000,
    }));
    let checked = 0;
    for (const file of files) {
      const doc = JSON.parse(readFileSync(file, 'utf8')) as { rules: unknown[] };
      for (const expr of subtrees(doc.rules)) {
        for (const d of data) {
          same(expr, JSON.parse(JSON.stringify(d)));
          checked++;
        }
      }
    }
    expect(checked).to.be.greaterThan(1000);
  });

  it('for each compiled form and the interpreter edge cases', () => {
    const data = { a: { b: [1, 2, 3] }, s: 'x', z: 0, e: [], n: null, items: [{ p: 2, q: 3 }, { p: 5 }] };
    for (const logic of [
      1, 'text', null, true, [], [1, { var: 'a.b' }, [{ var: 's' }]], { a: 1, b: 2 }, {},
      { var: 'a.b' }, { var: 'a.b.5' }, { var: 'n.x' }, { var: '' }, { var: ['missing', 'fallback'] }, { var: 1 }, { var: 'a.b.length' },
      { if: [] }, { if: [{ var: 's' }] }, { if: [{ var: 'z' }, 'yes'] }, { if: [{ var: 'z' }, 'yes', 'no'] },
      { if: [{ var: 'e' }, 1, { var: 'z' }, 2, 3] }, { if: [false, 1, true, 2] }, { '?:': [{ var: 's' }, 'y', 'n'] }, { if: 'lone' },
      { and: [] }, { and: [1, { var: 's' }, { var: 'z' }, 'never'] }, { and: [{ var: 'e' }] }, { and: 'x' },
      { or: [] }, { or: [0, { var: 'e' }, { var: 's' }] }, { or: [0, ''] },
      { map: [{ var: 'items' }, { var: 'p' }] }, { map: [{ var: 's' }, 1] }, { map: [{ var: 'items' }] }, { map: [] },
      { filter: [{ var: 'items' }, { var: 'q' }] }, { filter: [{ var: 'z' }, true] },
      { object: ['k', { var: 's' }, 'm.n', { var: 'a.b.0' }] }, { object: ['k'] }, { first: [{ var: 'n' }, '', { var: 's' }] },
      { sum: [{ var: 'a.b' }] }, { round: [{ '/': [{ var: 'a.b.1' }, 3] }] }, { merge: [[1], { var: 'a.b' }, 2] }, { cat: ['a', null, { var: 'z' }] },
      { '==': [{ var: 'z' }, false] }, { '!!': [{ var: 'e' }] }, { in: ['x', { var: 's' }] }, { '+': [] },
      { '===': [{ var: 'z' }, 0] }, { '!=': ['1', 1] }, { '!==': ['1', 1] }, { '!': { var: 'e' } }, { '!': [] }, { '!!': 'x' },
      { '>': ['10', 9] }, { '>=': [{ var: 'n' }, 0] }, { '<': [1, { var: 'a.b.1' }, 3] }, { '<': [1, 2, 2] }, { '<=': [1, 1, 0] }, { '<=': ['a', 'b'] },
      { '%': [7, { var: 'a.b.1' }] }, { '-': [{ var: 'a.b.2' }] }, { '-': ['5', 2] }, { '/': [1, 0] }, { '+': ['1.5', { var: 'a.b.0' }, null, 2, '3x', 4] },
      { '+': [0.1, 0.2] }, { '+': 'x' }, { in: [2, { var: 'a.b' }] }, { in: ['q', null] }, { in: [1, 5] },
      { reduce: [{ var: 'a.b' }, { '+': [{ var: 'current' }, { var: 'accumulator' }] }, 0] },
      { some: [{ var: 'items' }, { '>': [{ var: 'p' }, 4] }] }, { missing: ['a', 'zz'] }, { unknown_op: [1] }, { method: ['s', 'toUpperCase'] },
    ]) same(logic, data);
  });

  it('compiles each rule object once and gives the same answers when it is evaluated again', () => {
    const rule = Object.freeze({ map: [{ var: 'items' }, Object.freeze({ object: ['id', { var: 'p' }] })] });
    const data = { items: [{ p: 1 }, { p: 2 }] };
    const first = evaluate(rule, data);
    expect(evaluate(rule, data)).to.deep.equal(first);
    expect(evaluate(rule, { items: [{ p: 9 }] })).to.deep.equal([{ id: 9 }]);
  });
});
