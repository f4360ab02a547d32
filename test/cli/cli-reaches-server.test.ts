// An operator's CLI change reaches a running server within 2 s, without a restart:
// the CLI is spawned as its own process against the server's data directory.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { startTestServer, waitFor, type TestServer } from '../helpers/test-server.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { ROOT } from './run-cli.ts';

const lead = { event: { name: 'lead_created', id: 'L-1' }, context: { environment: 'prod', data_source: 'crm' } };

function cli(dataDir: string, ...args: string[]): Promise<any> {
  return cliWith({}, dataDir, ...args);
}

function cliWith(env: Record<string, string>, dataDir: string, ...args: string[]): Promise<any> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [join(ROOT, 'src/cli/bin.mjs'), ...args, '--json'], { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir, ...env } }, (err, stdout, stderr) => {
      if (err) reject(new Error(stderr));
      else resolve(JSON.parse(stdout));
    });
  });
}

describe('CLI changes reach the running server', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  it('an account created, disabled, enabled and rotated with the CLI takes effect within 2 s', async () => {
    const created = await cli(s.dataDir, 'accounts', 'create', '--name', 'CLI shop', '--tier', 'PRO', '--addon');
    const acct = { scriptId: created.script_id, token: created.access_token };
    expect((await s.post(INTAKE_PATHS.event, lead, { account: acct })).status).to.equal(200);

    await cli(s.dataDir, 'accounts', 'update', acct.scriptId, '--disable');
    let t0 = Date.now();
    expect(await waitFor(async () => (await s.post(INTAKE_PATHS.event, lead, { account: acct })).status === 403, 2000)).to.equal(true);
    expect(Date.now() - t0).to.be.below(2000);

    await cli(s.dataDir, 'accounts', 'update', acct.scriptId, '--enable');
    expect(await waitFor(async () => (await s.post(INTAKE_PATHS.event, lead, { account: acct })).status === 200, 2000)).to.equal(true);

    const rotated = await cli(s.dataDir, 'accounts', 'rotate-token', acct.scriptId, '--grace-hours', '0');
    t0 = Date.now();
    expect(await waitFor(async () => (await s.post(INTAKE_PATHS.event, lead, { account: acct })).status === 401, 2000)).to.equal(true);
    expect(Date.now() - t0).to.be.below(2000);
    expect((await s.post(INTAKE_PATHS.event, lead, { account: { scriptId: acct.scriptId, token: rotated.access_token } })).status).to.equal(200);
  });

  it("an account created with the CLI beside a server on another port prints that server's URL as base_url", async () => {
    // The server listens on a port no settings file the CLI reads names (PORT=0 here; PORT=3000 npm start for an operator).
    const port = new URL(s.url).port;
    expect(port).to.not.equal('8080');
    const created = await cli(s.dataDir, 'accounts', 'create', '--name', 'Port shop');
    expect(created.base_url).to.equal(`http://localhost:${port}`);
    // PUBLIC_BASE_URL in the CLI's settings still wins.
    const shown = await cliWith({ PUBLIC_BASE_URL: 'https://track.example' }, s.dataDir, 'accounts', 'show', created.script_id);
    expect(shown.base_url).to.equal('https://track.example');
  });
});
