// Not a test of the suite (no .test.ts): test/process/hermetic-run.test.ts runs it in a mocha
// of its own, started with an operator's settings in its environment and ENV_FILE and a temp
// folder of its own, then checks what the run saw and what it left behind, after the run
// failed or after it was interrupted.
import { expect } from 'chai';
import { tempDir } from './test-server.ts';
import { tempCli } from '../cli/run-cli.ts';
import { createTestDatabase, postgresAvailable } from './postgres.ts';
import { NO_SETTINGS_FILE, SERVICE_VARIABLES } from './service-variables.ts';

describe('a run that makes scratch and fails', function () {
  this.timeout(60_000);

  it('sees none of the settings it was started with', () => {
    const seen = SERVICE_VARIABLES.filter((name) => name !== 'ENV_FILE' && process.env[name] !== undefined);
    expect(seen, 'service variables left in the environment').to.deep.equal([]);
    expect(process.env.ENV_FILE).to.equal(NO_SETTINGS_FILE);
  });

  it('makes a temp folder, a CLI store and a PostgreSQL database, then fails (or waits, with TL_FIXTURE_INTERRUPT=1)', async () => {
    tempDir('tl-fixture-');
    const cli = tempCli();
    const made = await cli.json<{ script_id: string }>('accounts', 'create', '--name', 'Scratch shop');
    console.log(`fixture: account ${made.script_id} in ${cli.dataDir}`);
    if (await postgresAvailable()) console.log(`fixture: database ${(await createTestDatabase()).name}`);
    if (process.env.TL_FIXTURE_INTERRUPT === '1') {
      console.log('fixture: waiting to be interrupted');
      await new Promise(() => {});
    }
    throw new Error('deliberate failure, after making scratch it does not remove');
  });
});
