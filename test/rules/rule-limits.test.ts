// Rules cannot crash or freeze the service: limits on depth, size and literal arrays at
// load, on file size and rule count, with coded errors at the file and JSON path; and a
// real process that starts with a 7,000-deep account rule, keeps intake up, reports it in
// /readyz, survives the same file dropped in while running, and delivers once it is fixed.
import { expect } from 'chai';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkExpression, RULE_LIMITS } from '../../src/rules/check-expression.ts';
import { formatRuleError, loadRules, RULE_FILE_LIMITS } from '../../src/rules/load-rules.ts';
import { spawnServer, type SpawnedServer } from '../helpers/spawn-server.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { createAccountService } from '../../src/accounts/account-service.ts';
import { tempDir, waitFor } from '../helpers/test-server.ts';
import { shippedFolders } from '../helpers/shipped-folders.ts';

/** `{"and": [{"and": [ … true … ]}]}`, `levels` operations deep, as JSON text (built without recursion). */
function deepWhen(levels: number): string {
  return '{"and":['.repeat(levels) + 'true' + ']}'.repeat(levels);
}
const accountFile = (when: string) =>
  `{"destination": "ga4", "rules": [{"id": "deep", "event": "lead_created", "when": ${when}, "output": {"name": "x"}}]}`;

describe('rules: limits', () => {
  it('an expression nested past the limit is a coded error at its path; the walk never overflows', () => {
    const problems = checkExpression(JSON.parse(deepWhen(7_000)), '/rules/0/when');
    expect(problems).to.have.length(1);
    expect(problems[0].message).to.match(/^RULE_TOO_DEEP: the expression is nested deeper than 64 levels/);
    expect(problems[0].path.startsWith('/rules/0/when/and/0/and/0')).to.equal(true);
    expect(checkExpression(JSON.parse(deepWhen(20)), '/w')).to.deep.equal([]);
    expect(RULE_LIMITS.depth).to.equal(64);
  });

  it('refuses literal arrays over 1,000 elements and expressions over 2,000 values', () => {
    const big = Array.from({ length: 1_001 }, (_, i) => i);
    expect(checkExpression({ in: [1, big] }, '/w')[0].message).to.match(/^RULE_TOO_LARGE: a literal array of 1001 elements/);
    const wide = { and: Array.from({ length: 700 }, () => ({ '==': [1, 1] })) }; // 700 × 3 values
    expect(checkExpression(wide, '/w')[0].message).to.match(/^RULE_TOO_LARGE: the expression has more than 2000 values/);
  });

  describe('rule files', () => {
    let dir: string;
    beforeEach(() => {
      dir = tempDir('tl-rulelim-');
      cpSync(shippedFolders().rulesDir, dir, { recursive: true });
      mkdirSync(join(dir, 'accounts', 'AB12CD34'), { recursive: true });
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('names the file and path of a too-deep rule (rules check reads the same errors)', () => {
      writeFileSync(join(dir, 'accounts', 'AB12CD34', 'ga4.json'), accountFile(deepWhen(7_000)));
      const r = loadRules(dir, { displayBase: dir });
      expect(r.ok).to.equal(false);
      const line = !r.ok ? formatRuleError(r.errors[0]) : '';
      expect(line).to.match(/^accounts\/AB12CD34\/ga4\.json: \/rules\/0\/when\/and\/0\/.*: RULE_TOO_DEEP/);
    });

    it('refuses a file over 1 MiB before reading it, and a file with more than 500 rules', () => {
      const file = join(dir, 'accounts', 'AB12CD34', 'ga4.json');
      writeFileSync(file, ' '.repeat(RULE_FILE_LIMITS.bytes + 1));
      let r = loadRules(dir, { displayBase: dir });
      expect(!r.ok && formatRuleError(r.errors[0])).to.match(/^accounts\/AB12CD34\/ga4\.json: RULE_FILE_TOO_LARGE: 1048577 bytes/);
      const rules = Array.from({ length: 501 }, (_, i) => ({ id: `r${i}`, event: 'lead_created', output: { name: 'x' } }));
      writeFileSync(file, JSON.stringify({ destination: 'ga4', rules }));
      r = loadRules(dir, { displayBase: dir });
      expect(!r.ok && formatRuleError(r.errors[0])).to.equal('accounts/AB12CD34/ga4.json: /rules: RULE_FILE_TOO_LARGE: 501 rules; a rule file may have at most 500');
    });
  });
});

describe('rules: a real process with a 7,000-deep rule file', function () {
  this.timeout(60_000);
  let dir: string;
  let data: string;
  let server: SpawnedServer | undefined;
  before(() => {
    dir = tempDir('tl-deep-');
    data = tempDir('tl-deep-data-');
    cpSync(shippedFolders().rulesDir, dir, { recursive: true });
    mkdirSync(join(dir, 'accounts', 'AB12CD34'), { recursive: true });
    writeFileSync(join(dir, 'accounts', 'AB12CD34', 'ga4.json'), accountFile(deepWhen(7_000)));
  });
  after(async () => {
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    rmSync(dir, { recursive: true, force: true });
    rmSync(data, { recursive: true, force: true });
  });

  it('starts, accepts events, says so in /readyz; survives the file dropped in again; recovers when fixed', async () => {
    server = await spawnServer({ RULES_DIR: dir, DATA_DIR: data });
    expect(server.output()).to.contain('RULES INVALID AT START');
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).to.equal(200);
    const body = await ready.json() as { status: string; degraded?: string[] };
    expect(body.status).to.equal('ready');
    expect(body.degraded?.[0]).to.match(/^rules invalid since start .*accounts\/AB12CD34\/ga4\.json.*RULE_TOO_DEEP/);
    // Intake works: an event is acknowledged and stored.
    const store = openSqliteStore({ file: join(data, 'tracklane.db'), writerThread: false });
    try {
      const { account, accessToken } = await createAccountService(store).create({ name: 'Deep', tier: 'FLEX', addon: true });
      const r = await fetch(`${server.url}/webhooks/service/event?id=${account.scriptId}`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-service-access-token': accessToken },
        body: JSON.stringify({ event: { name: 'lead_created', id: 'L-DEEP' }, context: { environment: 'prod', data_source: 'crm' } }),
      });
      expect(r.status).to.equal(200);
      expect((await store.events.list({ scriptId: account.scriptId })).map((e) => e.status)).to.deep.equal(['accepted']);
    } finally {
      await store.close();
    }

    // Drop a second too-deep file in while running: the reload is refused, the process lives.
    writeFileSync(join(dir, 'accounts', 'AB12CD34', 'meta-capi.json'), accountFile(deepWhen(7_000)).replace('"ga4"', '"meta-capi"'));
    expect(await waitFor(() => /rule file invalid: .*meta-capi\.json/.test(server!.output()), 10_000)).to.equal(true);
    expect((await fetch(`${server.url}/healthz`)).status).to.equal(200);

    // Fixed: both files replaced by valid ones; the rules load and /readyz is whole again.
    writeFileSync(join(dir, 'accounts', 'AB12CD34', 'ga4.json'), accountFile('true'));
    rmSync(join(dir, 'accounts', 'AB12CD34', 'meta-capi.json'));
    expect(await waitFor(async () => ((await (await fetch(`${server!.url}/readyz`)).json()) as { degraded?: unknown }).degraded === undefined, 10_000)).to.equal(true);
    expect(await waitFor(() => server!.output().includes('"msg":"rules reloaded"'), 10_000)).to.equal(true);
  });
});
