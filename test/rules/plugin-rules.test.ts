// Plugin default rule files (plugins/<name>/rules.json) as the base layer of RULES_DIR:
// used where RULES_DIR has no file, overridden by a RULES_DIR file and by a store version,
// seen by account disables, by draft checks, by import (never imported) and by the watcher.
import { expect } from 'chai';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatRuleError, loadRules, type LoadRulesResult } from '../../src/rules/load-rules.ts';
import { usePluginRules } from '../../src/rules/plugin-rules.ts';
import { startRuleWatcher, type RuleWatcher } from '../../src/rules/rule-watcher.ts';
import { checkDraft, importRules, liveDocuments } from '../../src/rules/rule-versions.ts';
import type { RuleFile, RuleSpec } from '../../src/rules/types.ts';
import type { Store } from '../../src/store/types.ts';
import { storeHarness } from '../helpers/stores.ts';
import { tempDir, waitFor } from '../helpers/test-server.ts';

const quietLogger = { info: () => {}, warn: () => {}, error: () => {} };

const rule = (id: string, name = id): RuleSpec => ({ id, event: '*', output: { name } });
const off = (id: string): RuleSpec => ({ id, disabled: true } as RuleSpec);
const acme = (...rules: RuleSpec[]): RuleFile => ({ destination: 'acme', rules });

function write(dir: string, rel: string, doc: unknown): void {
  mkdirSync(join(dir, rel, '..'), { recursive: true });
  writeFileSync(join(dir, rel), JSON.stringify(doc));
}

function ok(r: LoadRulesResult) {
  if (!r.ok) throw new Error(r.errors.map(formatRuleError).join('\n'));
  return r.ruleSet;
}

const names = (rules: readonly RuleSpec[]) => rules.map((r) => r.output.name);

describe('plugin default rules', () => {
  let root: string;
  let rules: string;
  let plugins: string;
  beforeEach(() => {
    root = tempDir('tl-plugin-rules-');
    rules = join(root, 'rules');
    plugins = join(root, 'plugins');
    mkdirSync(rules);
    write(plugins, 'acme/rules.json', acme(rule('acme.a', 'from-plugin'), rule('acme.b')));
    write(plugins, 'other/index.ts', {});
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('a plugin rules.json is the default where RULES_DIR has no file; without a plugins folder it is not seen', () => {
    const set = ok(loadRules(rules, { pluginsDir: plugins, displayBase: root }));
    expect(set.files.map((f) => [f.file, f.destination, f.scriptId])).to.deep.equal([['plugins/acme/rules.json', 'acme', null]]);
    expect(names(set.rulesFor('AB12CD34', 'acme'))).to.deep.equal(['from-plugin', 'acme.b']);
    expect(ok(loadRules(rules)).destinations()).to.deep.equal([]);
  });

  it('a RULES_DIR file replaces the plugin default; account files override either, and may disable a plugin default', () => {
    write(rules, 'accounts/AB12CD34/acme.json', acme(off('acme.b'), rule('acme.c')));
    const set = ok(loadRules(rules, { pluginsDir: plugins }));
    expect(names(set.rulesFor('AB12CD34', 'acme'))).to.deep.equal(['from-plugin', 'acme.c']);
    write(rules, 'acme.json', acme(rule('acme.a', 'from-rules-dir'), rule('acme.b')));
    const over = ok(loadRules(rules, { pluginsDir: plugins }));
    expect(names(over.rulesFor('ZZ99ZZ99', 'acme'))).to.deep.equal(['from-rules-dir', 'acme.b']);
    expect(over.files.map((f) => f.file)).to.not.include(join(plugins, 'acme/rules.json'));
  });

  it('a broken plugin rules.json is refused with its path, like any rule file', () => {
    write(plugins, 'acme/rules.json', { destination: 'wrong', rules: [] });
    const r = loadRules(rules, { pluginsDir: plugins, displayBase: root });
    expect(r.ok ? [] : r.errors.map(formatRuleError)).to.deep.equal(['plugins/acme/rules.json: /destination: "wrong" does not match the file name; expected "acme"']);
  });

  it('a registered rules directory sees its plugins folder without the option', () => {
    usePluginRules(rules, plugins);
    expect(names(ok(loadRules(rules)).rulesFor('AB12CD34', 'acme'))).to.deep.equal(['from-plugin', 'acme.b']);
  });

  describe('with the store', () => {
    const harness = storeHarness('sqlite');
    let store: Store;
    let watcher: RuleWatcher | undefined;
    beforeEach(async () => {
      store = await harness.open();
      usePluginRules(rules, plugins);
    });
    afterEach(async () => {
      watcher?.close();
      watcher = undefined;
      await harness.close();
    });

    it('a store version overrides the plugin default; drafts disabling a plugin default are accepted, unknown ids refused', async () => {
      const draft = checkDraft({ dir: rules, live: [] }, { scope: 'AB12CD34', destination: 'acme', document: acme(off('acme.a')) });
      expect(draft.ok).to.equal(true);
      const bad = checkDraft({ dir: rules, live: [] }, { scope: 'AB12CD34', destination: 'acme', document: acme(off('acme.z')) });
      expect(bad.ok ? [] : bad.errors.map((e) => e.message)).to.deep.equal(['disables "acme.z", which is not a default acme rule']);
      const v = await store.rules.publish({ scope: 'default', destination: 'acme', document: acme(rule('acme.a', 'from-store')), author: 't', message: 'm' }, 1);
      const set = ok(loadRules(rules, { overlay: [{ file: 'v', scriptId: null, destination: 'acme', parsed: v.document, version: v.version }] }));
      expect(names(set.rulesFor('AB12CD34', 'acme'))).to.deep.equal(['from-store']);
    });

    it('import never turns a plugin default into a version, and live documents list it as the plugin default in force', async () => {
      write(rules, 'accounts/AB12CD34/acme.json', acme(off('acme.b')));
      const r = await importRules({ store: store.rules, dir: rules }, { author: 't', message: 'm' }, 1);
      if (!r.ok) throw new Error(JSON.stringify(r.errors));
      expect(r.imported.map((v) => `${v.scope}/${v.destination}`)).to.deep.equal(['AB12CD34/acme']);
      const docs = await liveDocuments(rules, store.rules);
      expect(docs.map((d) => [d.scope, d.destination, d.source, d.file])).to.deep.equal([
        ['default', 'acme', 'plugin', join('..', 'plugins', 'acme', 'rules.json')],
        ['AB12CD34', 'acme', 'store', null],
      ]);
    });

    it('the watcher reloads when a plugin rules.json changes', async () => {
      watcher = startRuleWatcher({ dir: rules, logger: quietLogger, store: store.rules, watch: false, pollMs: 30 });
      await watcher.ready;
      expect(names(watcher.current().rulesFor('AB12CD34', 'acme'))).to.deep.equal(['from-plugin', 'acme.b']);
      write(plugins, 'acme/rules.json', acme(rule('acme.a', 'edited')));
      const w = watcher;
      expect(await waitFor(() => names(w.current().rulesFor('AB12CD34', 'acme'))[0] === 'edited', 3_000, 20)).to.equal(true);
    });
  });
});
