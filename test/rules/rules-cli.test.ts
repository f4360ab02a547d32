// `tracklane rules check`, run as an operator would: the real CLI with RULES_DIR set, in a copy
// of the project without plugins/ (the shipped plugins' rules.json would count too), so only
// the fixture's files and the plugin folders a test lists count.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { copyProject } from '../helpers/project-copy.ts';

let ROOT: string;
let FIXTURES: string;

/** The CLI on `rulesDir`; only the fixture's files count. */
function run(rulesDir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runWith({ RULES_DIR: rulesDir }, ...args);
}

function runWith(vars: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env, ...vars, DATABASE_URL: '', PORT: '', PUBLIC_BASE_URL: '' };
  return new Promise((resolve) => {
    execFile(process.execPath, [join(ROOT, 'src/cli/bin.mjs'), 'rules', ...args], { cwd: ROOT, env, encoding: 'utf8' }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

describe('cli: rules check', function () {
  this.timeout(30_000);
  before(() => {
    ROOT = copyProject('tl-rules-cli-', ['package.json', 'tsconfig.json', 'src', 'test/rules/fixtures']);
    FIXTURES = join(ROOT, 'test/rules/fixtures');
  });
  after(() => rmSync(ROOT, { recursive: true, force: true }));

  it('valid rules: exit 0 with counts', async () => {
    const [json, text] = await Promise.all([
      run('test/rules/fixtures/valid', 'check', '--json'),
      run('test/rules/fixtures/valid', 'check'),
    ]);
    expect(json.stderr).to.equal('');
    expect(json.code).to.equal(0);
    expect(JSON.parse(json.stdout)).to.deep.equal({ ok: true, dir: join(FIXTURES, 'valid'), files: 4, rules: 8, errors: [] });
    expect(text.code).to.equal(0);
    expect(text.stdout).to.equal(`OK: 4 files, 8 rules (overrides for 2 accounts) in ${join(FIXTURES, 'valid')}\n`);
  });

  it('counts and checks the plugins\' own rules.json under RULES_DIR', async () => {
    const plugins = mkdtempSync(join(tmpdir(), 'tl-cli-plugins-'));
    try {
      mkdirSync(join(plugins, 'acme'));
      writeFileSync(join(plugins, 'acme', 'rules.json'), JSON.stringify({ destination: 'acme', rules: [{ id: 'acme.a', event: '*', output: { name: 'a' } }] }));
      const ok = await runWith({ RULES_DIR: 'test/rules/fixtures/valid', PLUGINS_DIR: plugins }, 'check', '--json');
      expect(JSON.parse(ok.stdout)).to.include({ ok: true, files: 5, rules: 9 });
      writeFileSync(join(plugins, 'acme', 'rules.json'), JSON.stringify({ destination: 'acme', rules: [{ id: 'acme.a', event: '*', output: { name: { frobnicate: [] } } }] }));
      const bad = await runWith({ RULES_DIR: 'test/rules/fixtures/valid', PLUGINS_DIR: plugins }, 'check', '--json');
      expect(bad.code).to.equal(1);
      expect(JSON.parse(bad.stdout).errors).to.deep.equal([{ file: join(plugins, 'acme', 'rules.json'), path: '/rules/0/output/name', message: 'unknown operation "frobnicate"' }]);
    } finally {
      rmSync(plugins, { recursive: true, force: true });
    }
  });

  it('invalid rules: exit 1 naming file and path, --json on stdout', async () => {
    const r = await run('test/rules/fixtures/unknown-op', 'check', '--json');
    expect(r.code).to.equal(1);
    expect(JSON.parse(r.stdout)).to.deep.equal({
      ok: false,
      dir: join(FIXTURES, 'unknown-op'),
      files: 1,
      rules: 3,
      errors: [
        { file: 'test/rules/fixtures/unknown-op/ga4.json', path: '/rules/2/output/params.value', message: 'unknown operation "sumitems" (did you mean "sum_items"?)' },
        { file: 'test/rules/fixtures/unknown-op/ga4.json', path: '/rules/2/output/params.items/map/1', message: 'operation "method" is not allowed in rules' },
      ],
    });
    expect(r.stderr).to.equal(`tracklane: rules check failed: 2 errors in ${join(FIXTURES, 'unknown-op')}\n`);
  });

  it('invalid rules as text: one `file: path: message` line per error on stderr', async () => {
    const r = await run(join(FIXTURES, 'duplicate-id'), 'check');
    expect(r.code).to.equal(1);
    expect(r.stdout).to.equal('');
    expect(r.stderr).to.equal(
      'test/rules/fixtures/duplicate-id/ga4.json: /rules/1/id: duplicate rule id "ga4.page" (first at /rules/0)\n' +
      `tracklane: rules check failed: 1 error in ${join(FIXTURES, 'duplicate-id')}\n`,
    );
  });

  it('a literal output the native schema refuses fails the check with its path; computed values and the shipped rules pass', async () => {
    const rules = mkdtempSync(join(tmpdir(), 'tl-cli-literal-'));
    // The checkout's own plugins, listed: the project copy the CLI runs from ships none.
    const plugins = fileURLToPath(new URL('../../plugins', import.meta.url));
    try {
      const ga4 = (first: Record<string, unknown>) => JSON.stringify({ destination: 'ga4', rules: [
        { id: 'ga4.lead', event: 'lead', output: { ...first, 'params.value': { var: 'event.value' } } },
        { id: 'ga4.other', event: 'signup', output: { name: { var: 'event.name' }, 'params.page_location': { cat: ['https://', { var: 'context.url' }] }, 'params.page_referrer': null } },
      ] });
      writeFileSync(join(rules, 'ga4.json'), ga4({ name: 42 }));
      const [json, text] = await Promise.all([
        runWith({ RULES_DIR: rules, PLUGINS_DIR: plugins }, 'check', '--json'),
        runWith({ RULES_DIR: rules, PLUGINS_DIR: plugins }, 'check'),
      ]);
      expect(json.code).to.equal(1);
      const message = 'the ga4 native schema refuses this value (/name: must be string): the rule could never send';
      expect(JSON.parse(json.stdout).errors).to.deep.equal([{ file: join(rules, 'ga4.json'), path: '/rules/0/output/name', message }]);
      expect(text.stderr).to.equal(`${join(rules, 'ga4.json')}: /rules/0/output/name: ${message}\ntracklane: rules check failed: 1 error in ${rules}\n`);
      writeFileSync(join(rules, 'ga4.json'), ga4({ name: 'generate_lead' }));
      const good = await runWith({ RULES_DIR: rules, PLUGINS_DIR: plugins }, 'check', '--json');
      expect(good.code, good.stdout + good.stderr).to.equal(0);
      // Every shipped plugin's own rules pass as they are.
      rmSync(join(rules, 'ga4.json'));
      const shipped = await runWith({ RULES_DIR: rules, PLUGINS_DIR: plugins }, 'check', '--json');
      expect(shipped.code, shipped.stdout + shipped.stderr).to.equal(0);
    } finally {
      rmSync(rules, { recursive: true, force: true });
    }
  });

  it('a missing RULES_DIR is an error, bad JSON is named with its line', async () => {
    const [missing, badJson] = await Promise.all([
      run('/nonexistent/rules', 'check', '--json'),
      run('test/rules/fixtures/invalid-json', 'check', '--json'),
    ]);
    expect(missing.code).to.equal(1);
    expect(JSON.parse(missing.stdout).errors).to.deep.equal([{ file: '/nonexistent/rules', path: '', message: 'rules directory does not exist or is not readable' }]);
    expect(badJson.code).to.equal(1);
    expect(JSON.parse(badJson.stdout).errors[0].message).to.match(/^invalid JSON: .* at line 4, column 69$/);
  });

  it('usage errors exit 2, including preview without --account', async () => {
    const [extra, unknown, preview] = await Promise.all([
      run(FIXTURES, 'check', 'extra'),
      run(FIXTURES, 'frob'),
      run(FIXTURES, 'preview', '--json'),
    ]);
    expect(extra.code).to.equal(2);
    expect(extra.stderr).to.match(/^tracklane: unexpected argument "extra"\n/);
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.match(/^tracklane: unknown command "rules frob"\n/);
    expect(preview.code).to.equal(2);
    expect(preview.stderr).to.match(/^tracklane: --account is required\n/);
  });
});
