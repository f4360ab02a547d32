// The project's own `.env` is the operator's (the README's PostgreSQL steps put DATABASE_URL
// in it, a CLI error suggests ALLOW_PRIVATE_DESTINATIONS=1 there): a server or CLI a test
// starts from the project folder reads none of it, so a test never writes into the operator's
// database and the SSRF guard stays shut. The file is written only when the checkout has none
// (never over the operator's own, which then must not reach the tests either) and removed after.
import { expect } from 'chai';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnServer, ROOT, type SpawnedServer } from '../helpers/spawn-server.ts';
import { tempDir } from '../helpers/test-server.ts';
import { expectFailure, tempCli, type TempCli } from '../cli/run-cli.ts';
import { OPERATOR_SETTINGS, operatorEnvFile } from '../helpers/service-variables.ts';

describe("process: the project's .env never reaches a test's server or CLI", function () {
  this.timeout(60_000);
  const file = join(ROOT, '.env');
  let removeFile = () => {};
  let server: SpawnedServer | undefined;
  let cli: TempCli | undefined;

  before(() => {
    try {
      writeFileSync(file, `# Written by test/process/project-env-file.test.ts while it runs; delete it if it is still here.\n${operatorEnvFile()}`, { flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return;
      throw err;
    }
    removeFile = () => rmSync(file, { force: true });
    process.once('exit', removeFile);
  });
  after(async () => {
    removeFile();
    cli?.remove();
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it("a spawned server uses its temp SQLite store, and the operator's admin token opens nothing", async () => {
    const dataDir = tempDir();
    server = await spawnServer({ DATA_DIR: dataDir });
    expect(server.output()).to.contain(`"database":"${join(dataDir, 'tracklane.db')}"`);
    const admin = await fetch(`${server.url}/admin/accounts`, { headers: { authorization: `Bearer ${OPERATOR_SETTINGS.ADMIN_TOKEN}` } });
    expect(admin.status, 'the admin API is off: no token was given').to.equal(404);
  });

  it('a CLI run uses its temp store, and the SSRF guard refuses a loopback destination', async () => {
    cli = tempCli();
    const { script_id: id } = await cli.json<{ script_id: string }>('accounts', 'create', '--name', 'CLI shop', '--tier', 'FLEX', '--addon');
    const listed = await cli.run('accounts', 'list');
    expect(listed.code, listed.stderr).to.equal(0);
    expect(listed.stdout).to.contain('CLI shop');
    expect(listed.stderr).to.contain(join(cli.dataDir, 'tracklane.db'));
    const hook = { url: 'http://127.0.0.1:9000/hook', secret: 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=' };
    expectFailure(await cli.run('destinations', 'add', id, '--type', 'webhook', '--config', JSON.stringify(hook), '--json'), 1, /address 127\.0\.0\.1 is loopback/);
  });
});
