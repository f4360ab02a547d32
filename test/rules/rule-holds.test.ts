// Which scope a broken rule document holds while the rules have never loaded whole: an
// account file holds that account × destination type; a default file holds its type for
// every account (account files included: they are layered on the defaults); an account
// file that disables a default the set lacks holds its own scope; a problem of no one file
// holds everything. Everything else loads and maps as usual.
import { expect } from 'chai';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadRules } from '../../src/rules/load-rules.ts';
import { describeHold } from '../../src/rules/rule-holds.ts';
import type { RuleSet } from '../../src/rules/rule-set.ts';
import { tempDir } from '../helpers/test-server.ts';

const rules = (destination: string, name: string, extra: object[] = []) =>
  JSON.stringify({ destination, rules: [{ id: `${destination}.main`, event: '*', output: { name } }, ...extra] });
const TOO_DEEP = (destination: string) =>
  `{"destination": "${destination}", "rules": [{"id": "deep", "event": "*", "when": ${'{"and":['.repeat(7_000)}true${']}'.repeat(7_000)}, "output": {"name": "x"}}]}`;

describe('rules: held scopes of a partial load', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir('tl-holds-');
    writeFileSync(join(dir, 'ga4.json'), rules('ga4', 'ga-default'));
    writeFileSync(join(dir, 'webhook.json'), rules('webhook', 'hook-default'));
    for (const a of ['AAAA0001', 'BBBB0002']) mkdirSync(join(dir, 'accounts', a), { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const partial = (): RuleSet => {
    const r = loadRules(dir, { displayBase: dir });
    expect(r.ok, 'the set as a whole is refused').to.equal(false);
    if (r.ok || !r.partial) throw new Error('no partial set');
    return r.partial;
  };
  const nameFor = (set: RuleSet, scriptId: string, destination: string) => set.rulesFor(scriptId, destination)[0]?.output.name;

  it('a broken account file holds that account × type; its other types and other accounts load', () => {
    writeFileSync(join(dir, 'accounts', 'AAAA0001', 'webhook.json'), TOO_DEEP('webhook'));
    writeFileSync(join(dir, 'accounts', 'AAAA0001', 'ga4.json'), rules('ga4', 'ga-a'));
    const set = partial();
    expect(set.held.map(describeHold)).to.deep.equal(['account AAAA0001 × webhook']);
    expect(set.held[0].error.file).to.equal('accounts/AAAA0001/webhook.json');
    expect(set.held[0].error.message).to.match(/^RULE_TOO_DEEP/);
    expect(set.heldFor('AAAA0001', 'webhook')).to.not.equal(null);
    expect(set.heldFor('AAAA0001', 'ga4')).to.equal(null);
    expect(set.heldFor('BBBB0002', 'webhook')).to.equal(null);
    expect(nameFor(set, 'AAAA0001', 'ga4')).to.equal('ga-a');
    expect(nameFor(set, 'BBBB0002', 'webhook')).to.equal('hook-default');
  });

  it('a broken default file holds its type for every account, overrides of that type included', () => {
    writeFileSync(join(dir, 'webhook.json'), '{"destination": "webhook", "rules": [');
    writeFileSync(join(dir, 'accounts', 'AAAA0001', 'webhook.json'), rules('webhook', 'hook-a'));
    const set = partial();
    expect(set.held.map(describeHold)).to.deep.equal(['webhook for every account']);
    expect(set.heldFor('AAAA0001', 'webhook')).to.not.equal(null);
    expect(set.heldFor('BBBB0002', 'webhook')).to.not.equal(null);
    expect(set.heldFor('BBBB0002', 'ga4')).to.equal(null);
    expect(set.files.map((f) => f.file)).to.deep.equal(['ga4.json']);
  });

  it('an account file disabling a default the loaded set lacks holds its own scope', () => {
    writeFileSync(join(dir, 'accounts', 'AAAA0001', 'ga4.json'), TOO_DEEP('ga4'));
    writeFileSync(join(dir, 'accounts', 'BBBB0002', 'webhook.json'), JSON.stringify({ destination: 'webhook', rules: [{ id: 'webhook.gone', disabled: true }] }));
    const set = partial();
    expect(set.held.map(describeHold).sort()).to.deep.equal(['account AAAA0001 × ga4', 'account BBBB0002 × webhook']);
    expect(nameFor(set, 'AAAA0001', 'webhook')).to.equal('hook-default');
  });

  it('a problem of no one file holds everything', () => {
    writeFileSync(join(dir, 'accounts', 'stray.json'), rules('ga4', 'x'));
    const set = partial();
    expect(set.held.map(describeHold)).to.deep.equal(['every destination of every account']);
    expect(set.heldFor('BBBB0002', 'ga4')).to.not.equal(null);
  });

  it('a whole set holds nothing', () => {
    const r = loadRules(dir, { displayBase: dir });
    expect(r.ok && r.ruleSet.held).to.deep.equal([]);
  });
});
