// The rule-version service (src/rules/rule-versions.ts) on both stores: a draft is checked
// with the files and live versions exactly as loading checks them, refused drafts leave the
// store untouched, rollbacks are checked too, two changes that only together break the rules
// cannot both land, import is all or nothing and skips unchanged files; diffs and live documents.
import { expect } from 'chai';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Store } from '../../src/store/types.ts';
import type { RuleFile, RuleSpec } from '../../src/rules/types.ts';
import { checkDraft, diffRules, importRules, liveDocuments, publishRules, rollbackRules } from '../../src/rules/rule-versions.ts';
import { STORE_KINDS, STORE_LABEL, storeHarness } from '../helpers/stores.ts';
import { tempDir } from '../helpers/test-server.ts';

const T0 = 1_800_000_000_000;
const rule = (id: string, name = id): RuleSpec => ({ id, event: '*', output: { name } });
const off = (id: string): RuleSpec => ({ id, disabled: true } as RuleSpec);
const ga4 = (...rules: RuleSpec[]): RuleFile => ({ destination: 'ga4', rules });
const note = { author: 'ana', message: 'test' };

function writeRules(dir: string, rel: string, doc: unknown): void {
  mkdirSync(join(dir, rel, '..'), { recursive: true });
  writeFileSync(join(dir, rel), typeof doc === 'string' ? doc : JSON.stringify(doc, null, 2));
}

describe('diffRules', () => {
  it('rule by rule by id: added, removed, changed, moved', () => {
    const before = ga4(rule('a'), rule('b'), rule('c'), rule('d'));
    const after = ga4(rule('c'), rule('a'), rule('b', 'B'), rule('e'));
    expect(diffRules(before, after)).to.deep.equal([
      { id: 'c', change: 'moved', before: rule('c'), after: rule('c') },
      { id: 'b', change: 'changed', before: rule('b'), after: rule('b', 'B') },
      { id: 'e', change: 'added', after: rule('e') },
      { id: 'd', change: 'removed', before: rule('d') },
    ]);
    expect(diffRules(before, before)).to.deep.equal([]);
    expect(diffRules(null, ga4(rule('a'))).map((d) => d.change)).to.deep.equal(['added']);
    expect(diffRules(ga4(rule('a'), off('x')), null).map((d) => [d.id, d.change])).to.deep.equal([['a', 'removed'], ['x', 'removed']]);
    const reordered: RuleSpec = { output: { name: 'a' }, event: '*', id: 'a' };
    expect(diffRules(ga4(rule('a')), ga4(reordered)), 'key order is no change').to.deep.equal([]);
  });
});

for (const kind of STORE_KINDS) describe(`rule-version service (${STORE_LABEL[kind]})`, function () {
  this.timeout(20_000);
  const harness = storeHarness(kind);
  let store: Store;
  let dir: string;
  const deps = () => ({ store: store.rules, dir });
  beforeEach(async () => {
    store = await harness.open();
    dir = tempDir('tl-rules-');
    writeRules(dir, 'ga4.json', ga4(rule('ga4.page'), rule('ga4.purchase')));
    writeRules(dir, 'accounts/AB12CD34/ga4.json', ga4(off('ga4.page')));
  });
  afterEach(async () => {
    await harness.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('checkDraft: a good draft gives the rule set with it; every check of loading applies, with paths into the draft', async () => {
    const good = checkDraft({ dir, live: [] }, { scope: 'AB12CD34', destination: 'ga4', document: ga4(rule('ga4.purchase', 'p2')) });
    expect(good.ok && good.ruleSet.rulesFor('AB12CD34', 'ga4').map((r) => r.output.name)).to.deep.equal(['ga4.page', 'p2']);
    const check = (scope: string, destination: string, document: unknown) => {
      const r = checkDraft({ dir, live: [] }, { scope, destination, document });
      return r.ok ? 'ok' : r.errors;
    };
    expect(check('AB12CD34', 'ga4', ga4(off('ga4.nope')))).to.deep.equal([{ path: '/rules/0/id', message: 'disables "ga4.nope", which is not a default ga4 rule' }]);
    expect(check('default', 'ga4', ga4(rule('ga4.purchase'))), 'removing a default an account disables breaks that account').to.deep.equal([
      { file: 'accounts/AB12CD34/ga4.json', path: '/rules/0/id', message: 'disables "ga4.page", which is not a default ga4 rule' },
    ]);
    expect(check('default', 'ga4', { destination: 'meta-capi', rules: [] })).to.deep.equal([
      { path: '/destination', message: '"meta-capi" does not match the destination it is published for; expected "ga4"' },
    ]);
    expect(check('default', 'ga4', ga4({ id: 'x', event: '*', output: { name: { sumitems: [] } } }))).to.deep.equal([
      { path: '/rules/0/output/name', message: 'unknown operation "sumitems" (did you mean "sum_items"?)' },
    ]);
    expect(check('default', 'ga4', ga4(rule('a'), rule('a')))).to.deep.equal([{ path: '/rules/1/id', message: 'duplicate rule id "a" (first at /rules/0)' }]);
    expect(check('shop-1', 'GA4', ga4())).to.deep.equal([
      { path: '', message: 'scope "shop-1" is neither "default" nor a script id (8 characters A-Z, 0-9)' },
      { path: '', message: '"GA4" is not a destination name (lower-case letters, digits and -)' },
    ]);
    expect((check('default', 'ga4', { destination: 'ga4' }) as { message: string }[])[0].message).to.equal('missing required "rules"');
  });

  it('publishRules: a good draft becomes live; a refused one leaves the store as it was', async () => {
    const bad = await publishRules(deps(), { scope: 'default', destination: 'ga4', document: ga4(rule('ga4.purchase')), ...note }, T0);
    expect(bad.ok).to.equal(false);
    expect(await store.rules.revision()).to.equal(0);
    const good = await publishRules(deps(), { scope: 'default', destination: 'ga4', document: ga4(rule('ga4.page', 'v2'), rule('ga4.new')), ...note }, T0);
    if (!good.ok) throw new Error(JSON.stringify(good.errors));
    expect(good.version).to.deep.include({ scope: 'default', destination: 'ga4', author: 'ana', message: 'test', live: true, createdAt: T0 });
    expect((await store.rules.live()).map((v) => v.version)).to.deep.equal([good.version.version]);
  });

  it('rollbackRules: a missing version is an error; a version that would break the rules now is refused; else it is live again', async () => {
    expect(await rollbackRules(deps(), 42, 'ana', '', T0)).to.deep.equal({ ok: false, errors: [{ path: '', message: 'version 42 does not exist' }] });
    const v1 = await publishRules(deps(), { scope: 'default', destination: 'ga4', document: ga4(rule('ga4.page'), rule('ga4.purchase')), ...note }, T0);
    const v2 = await publishRules(deps(), { scope: 'default', destination: 'ga4', document: ga4(rule('ga4.page'), rule('ga4.lead')), ...note }, T0);
    const acct = await publishRules(deps(), { scope: 'AB12CD34', destination: 'ga4', document: ga4(off('ga4.lead')), ...note }, T0);
    if (!v1.ok || !v2.ok || !acct.ok) throw new Error('setup failed');
    expect(await rollbackRules(deps(), v1.version.version, 'ana', 'back', T0)).to.deep.equal({ ok: false, errors: [
      { file: `version ${acct.version.version} (AB12CD34/ga4)`, path: '/rules/0/id', message: 'disables "ga4.lead", which is not a default ga4 rule' },
    ] });
    await publishRules(deps(), { scope: 'AB12CD34', destination: 'ga4', document: ga4(off('ga4.page')), ...note }, T0);
    const back = await rollbackRules(deps(), v1.version.version, 'bo', 'back', T0 + 1);
    expect(back.ok && back.version).to.deep.include({ version: v1.version.version, live: true });
    expect((await store.rules.history({ limit: 1 }))[0]).to.deep.include({ action: 'rollback', author: 'bo', message: 'back', version: v1.version.version });
  });

  it('two changes checked at once that only together break the rules: one lands, the other is refused', async () => {
    const [a, b] = await Promise.all([
      publishRules(deps(), { scope: 'default', destination: 'ga4', document: ga4(rule('ga4.page')), ...note }, T0),
      publishRules(deps(), { scope: 'AB12CD34', destination: 'ga4', document: ga4(off('ga4.purchase')), ...note }, T0),
    ]);
    expect([a.ok, b.ok].sort()).to.deep.equal([false, true]);
    const live = await store.rules.live();
    expect(live).to.have.length(1);
    expect(checkDraft({ dir, live }, { scope: live[0].scope, destination: 'ga4', document: live[0].document }).ok, 'the live set still checks').to.equal(true);
  });

  it('importRules: all files checked as a whole with the versions that have no file; changed ones land together, unchanged are skipped', async () => {
    const acctOnly = await store.rules.publish({ scope: 'ZZ99ZZ99', destination: 'ga4', document: ga4(off('ga4.purchase')), ...note }, T0);
    const first = await importRules(deps(), note, T0);
    if (!first.ok) throw new Error(JSON.stringify(first.errors));
    expect(first.imported.map((v) => [v.scope, v.destination])).to.deep.equal([['default', 'ga4'], ['AB12CD34', 'ga4']]);
    expect(first.unchanged).to.deep.equal([]);
    // The default drops ga4.page and the account stops disabling it: only valid together.
    writeRules(dir, 'ga4.json', ga4(rule('ga4.purchase')));
    writeRules(dir, 'accounts/AB12CD34/ga4.json', ga4(rule('ga4.lead')));
    const second = await importRules(deps(), note, T0);
    if (!second.ok) throw new Error(JSON.stringify(second.errors));
    expect(second.imported).to.have.length(2);
    // Now one that breaks the account kept only in the store: nothing is imported.
    writeRules(dir, 'ga4.json', ga4(rule('ga4.page')));
    const rev = await store.rules.revision();
    const refused = await importRules(deps(), note, T0);
    expect(refused).to.deep.equal({ ok: false, errors: [
      { file: `version ${acctOnly.version} (ZZ99ZZ99/ga4)`, path: '/rules/0/id', message: 'disables "ga4.purchase", which is not a default ga4 rule' },
    ] });
    writeRules(dir, 'meta-capi.json', '{ "destination": ');
    const unreadable = await importRules(deps(), note, T0);
    expect(!unreadable.ok && unreadable.errors[0].file).to.equal('meta-capi.json');
    expect(await store.rules.revision()).to.equal(rev);
    writeRules(dir, 'ga4.json', ga4(rule('ga4.purchase')));
    rmSync(join(dir, 'meta-capi.json'));
    const same = await importRules(deps(), note, T0);
    expect(same.ok && [same.imported.length, same.unchanged.map((u) => u.file)]).to.deep.equal([0, ['ga4.json', join('accounts', 'AB12CD34', 'ga4.json')]]);
  });

  it('liveDocuments: each (scope, destination) from the store when it has a version, else from its file', async () => {
    writeRules(dir, 'meta-capi.json', '{ not json');
    const v = await store.rules.publish({ scope: 'AB12CD34', destination: 'ga4', document: ga4(rule('x')), ...note }, T0);
    const docs = await liveDocuments(dir, store.rules);
    expect(docs.map((d) => [d.scope, d.destination, d.source, d.version, d.file])).to.deep.equal([
      ['default', 'ga4', 'file', null, 'ga4.json'],
      ['default', 'meta-capi', 'file', null, 'meta-capi.json'],
      ['AB12CD34', 'ga4', 'store', v.version, null],
    ]);
    expect(docs[1].document).to.equal(null);
    expect(docs[2].document).to.deep.equal(ga4(rule('x')));
  });
});
