import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatRuleError, loadRules, type LoadRulesResult } from '../../src/rules/load-rules.ts';
import { shippedFolders } from '../helpers/shipped-folders.ts';

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const load = (name: string) => loadRules(join(FIXTURES, name), { displayBase: FIXTURES });

function errorsOf(r: LoadRulesResult) {
  if (r.ok) throw new Error('expected errors');
  return r.errors;
}

describe('loadRules', () => {
  it('loads the valid fixtures: defaults, account files, nothing else', () => {
    const r = load('valid');
    if (!r.ok) throw new Error(r.errors.map(formatRuleError).join('\n'));
    expect(r.files).to.equal(4);
    expect(r.rules).to.equal(8);
    expect(r.ruleSet.files.map((f) => [f.file, f.destination, f.scriptId])).to.deep.equal([
      ['valid/ga4.json', 'ga4', null],
      ['valid/meta-capi.json', 'meta-capi', null],
      ['valid/accounts/AB12CD34/ga4.json', 'ga4', 'AB12CD34'],
      ['valid/accounts/ZZ99ZZ99/meta-capi.json', 'meta-capi', 'ZZ99ZZ99'],
    ]);
    expect(r.ruleSet.destinations()).to.deep.equal(['ga4', 'meta-capi']);
    expect(r.ruleSet.accounts()).to.deep.equal(['AB12CD34', 'ZZ99ZZ99']);
  });

  it('returns a frozen snapshot', () => {
    const r = load('valid');
    if (!r.ok) throw new Error('invalid');
    const rules = r.ruleSet.rulesFor('ANY00000', 'ga4');
    expect(Object.isFrozen(rules)).to.equal(true);
    expect(Object.isFrozen(rules[0].output)).to.equal(true);
    expect(() => (rules[0].output as Record<string, unknown>).name = 'x').to.throw(TypeError);
  });

  describe('per-account rules', () => {
    const r = load('valid');
    if (!r.ok) throw new Error('invalid');
    const ids = (scriptId: string, dest: string) => r.ruleSet.rulesFor(scriptId, dest).map((x) => x.id);

    it('other accounts get the defaults', () => {
      expect(ids('OTHER000', 'ga4')).to.deep.equal(['ga4.purchase', 'ga4.add_to_cart', 'ga4.page']);
      expect(ids('ZZ99ZZ99', 'ga4')).to.deep.equal(['ga4.purchase', 'ga4.add_to_cart', 'ga4.page']);
      expect(r.ruleSet.rulesFor('OTHER000', 'ga4')[0].output).to.have.property('params.items');
    });

    it('an account replaces a default in place, disables one and adds its own', () => {
      expect(ids('AB12CD34', 'ga4')).to.deep.equal(['ga4.purchase', 'ga4.add_to_cart', 'ga4.lead']);
      expect(r.ruleSet.rulesFor('AB12CD34', 'ga4')[0].description).to.equal('this account reports purchases in cents');
    });

    it('disabling only affects that account and destination', () => {
      expect(ids('ZZ99ZZ99', 'meta-capi')).to.deep.equal([]);
      expect(ids('AB12CD34', 'meta-capi')).to.deep.equal(['meta-capi.purchase']);
    });

    it('an unknown destination has no rules', () => {
      expect(ids('AB12CD34', 'tiktok')).to.deep.equal([]);
    });
  });

  it('reports invalid JSON with its line and column', () => {
    expect(errorsOf(load('invalid-json'))).to.deep.equal([
      { file: 'invalid-json/ga4.json', path: '', message: 'invalid JSON: Expected double-quoted property name at line 4, column 69' },
    ]);
  });

  it('reports schema violations with their JSON path', () => {
    expect(errorsOf(load('invalid-schema'))).to.deep.equal([
      { file: 'invalid-schema/ga4.json', path: '/rules/1', message: 'missing required "output"' },
      { file: 'invalid-schema/ga4.json', path: '/rules/1/ouput', message: 'unknown property (allowed: id, event, when, disabled, description, output)' },
    ]);
  });

  it('reports unknown and removed operations at the path of the expression', () => {
    const errors = errorsOf(load('unknown-op'));
    expect(errors).to.deep.equal([
      { file: 'unknown-op/ga4.json', path: '/rules/2/output/params.value', message: 'unknown operation "sumitems" (did you mean "sum_items"?)' },
      { file: 'unknown-op/ga4.json', path: '/rules/2/output/params.items/map/1', message: 'operation "method" is not allowed in rules' },
    ]);
    expect(formatRuleError(errors[0])).to.equal(
      'unknown-op/ga4.json: /rules/2/output/params.value: unknown operation "sumitems" (did you mean "sum_items"?)',
    );
  });

  it('reports duplicate rule ids', () => {
    expect(errorsOf(load('duplicate-id'))).to.deep.equal([
      { file: 'duplicate-id/ga4.json', path: '/rules/1/id', message: 'duplicate rule id "ga4.page" (first at /rules/0)' },
    ]);
  });

  it('reports a destination that differs from the file name', () => {
    expect(errorsOf(load('wrong-destination'))).to.deep.equal([
      { file: 'wrong-destination/ga4.json', path: '/destination', message: '"meta-capi" does not match the file name; expected "ga4"' },
    ]);
  });

  it('reports an account disabling a rule the defaults do not have', () => {
    expect(errorsOf(load('bad-disable'))).to.deep.equal([
      { file: 'bad-disable/accounts/AB12CD34/ga4.json', path: '/rules/0/id', message: 'disables "ga4.pageview", which is not a default ga4 rule' },
    ]);
  });

  it('reports an account folder that is not a script id', () => {
    expect(errorsOf(load('bad-account-dir'))).to.deep.equal([
      { file: 'bad-account-dir/accounts/lowercase', path: '', message: '"lowercase" is not a script id (8 characters A-Z, 0-9)' },
    ]);
  });

  it('reports a missing directory', () => {
    expect(errorsOf(load('nope'))).to.deep.equal([{ file: 'nope', path: '', message: 'rules directory does not exist or is not readable' }]);
  });

  describe('in a temp dir', () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'tl-rules-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));
    const write = (rel: string, data: unknown) => {
      mkdirSync(join(dir, rel, '..'), { recursive: true });
      writeFileSync(join(dir, rel), typeof data === 'string' ? data : JSON.stringify(data));
    };
    const errors = () => errorsOf(loadRules(dir, { displayBase: dir }));

    it('an empty directory is an empty rule set', () => {
      const r = loadRules(dir);
      expect(r.ok && r.ruleSet.rulesFor('AB12CD34', 'ga4')).to.deep.equal([]);
    });

    it('ignores hidden files and other extensions, refuses loose account files', () => {
      write('.ga4.json', '{broken');
      write('ga4.json~', '{broken');
      write('notes.txt', 'x');
      expect(loadRules(dir).ok).to.equal(true);
      write('accounts/ga4.json', { destination: 'ga4', rules: [] });
      expect(errors()).to.deep.equal([
        { file: 'accounts/ga4.json', path: '', message: 'account rule files belong in accounts/<SCRIPT_ID>/<destination>.json' },
      ]);
    });

    it('refuses overlapping output keys and literal objects', () => {
      write('ga4.json', {
        destination: 'ga4',
        rules: [{ id: 'a', event: '*', output: { params: { var: 'x' }, 'params.value': 1, 'user.props': { a: 1, b: 2 } } }],
      });
      expect(errors()).to.deep.equal([
        { file: 'ga4.json', path: '/rules/0/output/params.value', message: 'overlaps the output key "params"; write every field of "params" as its own dot path' },
        { file: 'ga4.json', path: '/rules/0/output/user.props', message: 'an object with 2 keys is not evaluated by json-logic; build objects with dot-path output keys or {"object": [key, value, …]}' },
      ]);
    });

    it('checks `when` and refuses reserved key names', () => {
      write('ga4.json', '{"destination":"ga4","rules":[{"id":"a","event":"*","when":{"nope":[]},"output":{"__proto__.x":1}}]}');
      expect(errors()).to.deep.equal([
        { file: 'ga4.json', path: '/rules/0/when', message: 'unknown operation "nope" (did you mean "none"?)' },
        { file: 'ga4.json', path: '/rules/0/output/__proto__.x', message: 'key "__proto__.x" uses the reserved name "__proto__"' },
      ]);
    });

    it('one bad file fails the whole load, listing errors of every file', () => {
      write('ga4.json', { destination: 'ga4', rules: [{ id: 'a', event: '*', output: { x: { bad: 1 } } }] });
      write('tiktok.json', { destination: 'tiktok', rules: [{ id: 'b', output: {} }] });
      write('meta-capi.json', { destination: 'meta-capi', rules: [] });
      const r = loadRules(dir, { displayBase: dir });
      expect(r.ok).to.equal(false);
      expect(errorsOf(r).map(formatRuleError)).to.deep.equal([
        'ga4.json: /rules/0/output/x: unknown operation "bad"',
        'tiktok.json: /rules/0: missing required "event"',
      ]);
      expect(r.files).to.equal(3);
    });

    it('shows absolute paths for files outside the display base', () => {
      write('ga4.json', '[]');
      expect(errorsOf(loadRules(dir, { displayBase: ROOT }))[0].file).to.equal(join(dir, 'ga4.json'));
    });
  });

  it('the default rules shipped in rules/ load', () => {
    const r = loadRules(shippedFolders().rulesDir, { displayBase: ROOT });
    expect(r.ok ? [] : r.errors.map(formatRuleError)).to.deep.equal([]);
  });
});
