// `tracklane rules import|export|history|diff|publish|rollback`, run as an operator would
// (the real CLI, a temp DATA_DIR and RULES_DIR), on SQLite and on PostgreSQL.
import { expect } from 'chai';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempCli, type TempCli } from './run-cli.ts';
import { tempDir } from '../helpers/test-server.ts';
import { createTestDatabase, requirePostgres, type TestDatabase } from '../helpers/postgres.ts';

const page = (name = 'page_view') => ({ id: 'ga4.page', event: '*', output: { name } });
const purchase = { id: 'ga4.purchase', event: 'checkout_completed', output: { name: 'purchase', 'params.value': { var: 'event.value' } } };
const ga4 = (...rules: unknown[]) => ({ destination: 'ga4', rules });

interface VersionJson { version: number; scope: string; destination: string; author: string; message: string; live: boolean }

for (const kind of ['SQLite', 'PostgreSQL'] as const) describe(`cli: rule versions (${kind})`, function () {
  this.timeout(60_000);
  let db: TestDatabase | undefined;
  let rules: string;
  let cli: TempCli;
  const write = (rel: string, doc: unknown) => {
    mkdirSync(join(rules, rel, '..'), { recursive: true });
    writeFileSync(join(rules, rel), JSON.stringify(doc, null, 2));
  };
  before(async function () {
    if (kind === 'PostgreSQL') {
      await requirePostgres(this);
      db = await createTestDatabase();
    }
  });
  after(async () => {
    await db?.drop();
  });
  beforeEach(async () => {
    await db?.reset();
    rules = tempDir('tl-rules-');
    cli = tempCli({ databaseUrl: db?.url, env: { RULES_DIR: rules, USER: 'ops-user' } });
    write('ga4.json', ga4(page(), purchase));
    write('accounts/AB12CD34/ga4.json', ga4({ id: 'ga4.page', disabled: true }));
  });
  afterEach(() => {
    cli.remove();
    rmSync(rules, { recursive: true, force: true });
  });

  it('import stores the files that differ from their live version, skips the rest; history lists it newest first', async () => {
    const first = await cli.json<{ imported: VersionJson[]; unchanged: unknown[] }>('rules', 'import', '--message', 'first import', '--author', 'ana');
    expect(first.imported.map((v) => [v.scope, v.destination, v.author, v.message, v.live])).to.deep.equal([
      ['default', 'ga4', 'ana', 'first import', true], ['AB12CD34', 'ga4', 'ana', 'first import', true],
    ]);
    expect(first.unchanged).to.deep.equal([]);
    write('ga4.json', ga4(page('pv'), purchase));
    const second = await cli.run('rules', 'import');
    expect(second.code, second.stderr).to.equal(0);
    expect(second.stdout).to.equal([
      `imported   ga4.json as version 3`,
      `unchanged  ${join('accounts', 'AB12CD34', 'ga4.json')} (version 2)`,
      '1 imported, 1 unchanged; running instances serve them within 2 s.',
    ].join('\n') + '\n');
    const history = await cli.json<{ version: number; action: string; author: string; live: boolean; message: string }[]>('rules', 'history');
    expect(history.map((c) => [c.version, c.action, c.author, c.live])).to.deep.equal([[3, 'publish', 'ops-user', true], [2, 'publish', 'ana', true], [1, 'publish', 'ana', false]]);
    expect(history[0].message).to.equal(`import from ${rules}`);
    expect((await cli.json<unknown[]>('rules', 'history', '--scope', 'AB12CD34'))).to.have.length(1);
    expect((await cli.json<{ version: number }[]>('rules', 'history', '--destination', 'ga4', '--limit', '1')).map((c) => c.version)).to.deep.equal([3]);
    const text = await cli.run('rules', 'history', '--scope', 'default');
    expect(text.stdout.split('\n')[0]).to.match(/^VERSION +ACTION +SCOPE +DESTINATION +AT +AUTHOR +LIVE +MESSAGE$/);
    expect(text.stdout.split('\n')).to.have.length(4);
  });

  it('import is all or nothing: one bad file, `file: path: message` lines, exit 1, nothing stored', async () => {
    write('accounts/ZZ99ZZ99/ga4.json', ga4({ id: 'ga4.nope', disabled: true }));
    write('meta-capi.json', { destination: 'meta-capi', rules: [{ id: 'm', event: '*', output: { name: { sumitems: [] } } }] });
    const r = await cli.run('rules', 'import');
    expect(r.code).to.equal(1);
    expect(r.stdout).to.equal('');
    expect(r.stderr).to.equal([
      'meta-capi.json: /rules/0/output/name: unknown operation "sumitems" (did you mean "sum_items"?)',
      `tracklane: rules import refused (nothing imported) in ${rules}: 1 error`,
    ].join('\n') + '\n');
    rmSync(join(rules, 'meta-capi.json'));
    const json = await cli.run('rules', 'import', '--json');
    expect(json.code).to.equal(1);
    expect(JSON.parse(json.stdout)).to.deep.equal({ ok: false, errors: [
      { file: join('accounts', 'ZZ99ZZ99', 'ga4.json'), path: '/rules/0/id', message: 'disables "ga4.nope", which is not a default ga4 rule' },
    ] });
    expect(await cli.json('rules', 'history')).to.deep.equal([]);
  });

  it('publish checks one file with the rules it joins; rollback makes an older version live; diff shows rule by rule', async () => {
    await cli.json('rules', 'import');
    const draft = join(cli.dataDir, 'draft.json');
    writeFileSync(draft, JSON.stringify(ga4({ id: 'ga4.purchase', disabled: true }, { id: 'ga4.lead', event: 'lead_created', output: { name: 'generate_lead' } })));
    const published = await cli.json<{ ok: boolean; version: VersionJson }>('rules', 'publish', draft, '--scope', 'AB12CD34', '--message', 'leads');
    expect(published.version).to.deep.include({ version: 3, scope: 'AB12CD34', destination: 'ga4', message: 'leads', author: 'ops-user', live: true });

    const diff = await cli.run('rules', 'diff', '2', '3');
    expect(diff.stdout).to.equal([
      'version 2 (AB12CD34/ga4) -> version 3 (AB12CD34/ga4): 3 rule changes',
      'added    ga4.purchase',
      '  + {"id":"ga4.purchase","disabled":true}',
      'added    ga4.lead',
      '  + {"id":"ga4.lead","event":"lead_created","output":{"name":"generate_lead"}}',
      'removed  ga4.page',
      '  - {"id":"ga4.page","disabled":true}',
    ].join('\n') + '\n');
    const diffJson = await cli.json<{ changes: { id: string; change: string }[] }>('rules', 'diff', '3', '2');
    expect(diffJson.changes.map((c) => [c.id, c.change])).to.deep.equal([['ga4.page', 'added'], ['ga4.purchase', 'removed'], ['ga4.lead', 'removed']]);

    // The defaults without ga4.purchase would break the account that now disables it.
    writeFileSync(draft, JSON.stringify(ga4(page())));
    const refused = await cli.run('rules', 'publish', draft);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.equal([
      'version 3 (AB12CD34/ga4): /rules/0/id: disables "ga4.purchase", which is not a default ga4 rule',
      'tracklane: publish refused: 1 error',
    ].join('\n') + '\n');
    writeFileSync(draft, JSON.stringify({ destination: 'ga4', rules: [{ id: 'x', event: '*', output: { name: { method: [] } } }] }));
    const bad = await cli.run('rules', 'publish', draft, '--json');
    expect(JSON.parse(bad.stdout)).to.deep.equal({ ok: false, errors: [{ file: draft, path: '/rules/0/output/name', message: 'operation "method" is not allowed in rules' }] });

    const back = await cli.run('rules', 'rollback', '2', '--message', 'leads go to the CRM instead');
    expect(back.code, back.stderr).to.equal(0);
    expect(back.stdout).to.equal('Rolled back to version 2 (AB12CD34/ga4); running instances serve it within 2 s.\n');
    const [latest] = await cli.json<{ action: string; version: number; message: string }[]>('rules', 'history', '--limit', '1');
    expect(latest).to.deep.include({ action: 'rollback', version: 2, message: 'leads go to the CRM instead' });

    const reverted = await cli.run('rules', 'revert', 'ga4', '--scope', 'AB12CD34', '--message', 'the file again');
    expect(reverted.code, reverted.stderr).to.equal(0);
    expect(reverted.stdout).to.equal('Reverted AB12CD34/ga4 (was version 2): its rule file or plugin default serves; running instances within 2 s.\n');
    const [last] = await cli.json<{ action: string; version: number; live: boolean }[]>('rules', 'history', '--limit', '1');
    expect(last).to.deep.include({ action: 'revert', version: 2, message: 'the file again', live: false });
    const again = await cli.run('rules', 'revert', 'ga4', '--scope', 'AB12CD34');
    expect(again.code).to.equal(1);
    expect(again.stderr).to.contain('no published version of ga4 is live in scope AB12CD34');
  });

  it('export writes every live version where its file belongs; importing the export changes nothing', async () => {
    expect((await cli.run('rules', 'export')).stdout).to.equal('No rule versions in the store; nothing written.\n');
    await cli.json('rules', 'import');
    const out = tempDir('tl-export-');
    try {
      const exported = await cli.json<{ written: { version: number; file: string }[] }>('rules', 'export', '--dir', out);
      expect(exported.written).to.deep.equal([
        { version: 1, scope: 'default', destination: 'ga4', file: join(out, 'ga4.json') },
        { version: 2, scope: 'AB12CD34', destination: 'ga4', file: join(out, 'accounts', 'AB12CD34', 'ga4.json') },
      ]);
      expect(readFileSync(join(out, 'ga4.json'), 'utf8')).to.equal(JSON.stringify(ga4(page(), purchase), null, 2) + '\n');
      const again = tempCli({ databaseUrl: db?.url, env: { RULES_DIR: out, DATA_DIR: cli.dataDir } });
      try {
        const r = await again.json<{ imported: unknown[]; unchanged: unknown[] }>('rules', 'import');
        expect([r.imported.length, r.unchanged.length]).to.deep.equal([0, 2]);
      } finally {
        again.remove();
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('usage and lookup errors: a missing version, a missing argument, a bad scope', async () => {
    await cli.json('rules', 'import');
    const [missing, noB, scope, noVersion] = await Promise.all([
      cli.run('rules', 'diff', '1', '99'), cli.run('rules', 'diff', '1'),
      cli.run('rules', 'publish', join(rules, 'ga4.json'), '--scope', 'shop'), cli.run('rules', 'rollback', '7'),
    ]);
    expect([missing.code, missing.stderr]).to.deep.equal([1, 'tracklane: no rule version 99\n']);
    expect(noB.code).to.equal(2);
    expect(noB.stderr).to.match(/^tracklane: missing B\n/);
    expect(scope.code).to.equal(1);
    expect(scope.stderr).to.include('scope "shop" is neither "default" nor a script id');
    expect([noVersion.code, noVersion.stderr]).to.deep.equal([1, 'tracklane: no rule version 7\n']);
  });
});
