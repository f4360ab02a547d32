// The CLI as a whole: usage naming every command, unknown commands, no group left unbuilt.
import { expect } from 'chai';
import { tempCli, type TempCli } from './run-cli.ts';
import { UNAVAILABLE_GROUPS } from '../../src/cli/usage.ts';

describe('cli: usage', function () {
  this.timeout(30_000);
  let cli: TempCli;
  before(() => {
    cli = tempCli();
  });
  after(() => cli.remove());

  it('--help and no arguments print usage naming every command, exit 0', async () => {
    const [help, bare] = await Promise.all([cli.run('--help'), cli.run()]);
    for (const r of [help, bare]) {
      expect(r.code).to.equal(0);
      expect(r.stderr).to.equal('');
      for (const c of ['serve', 'migrate', 'backup', 'restore', 'migrate-store', 'accounts create', 'accounts list', 'accounts show', 'accounts update', 'accounts rotate-token',
        'events list', 'destinations add', 'destinations list', 'destinations remove', 'destinations update', 'rules check',
        'rules preview', 'rules import', 'rules export', 'rules history', 'rules diff', 'rules publish', 'rules rollback', 'rules revert',
        'deliveries list', 'deliveries replay', 'plugins list', 'customers list', 'customers new']) {
        expect(r.stdout).to.match(new RegExp(`^ {2}${c}\\b`, 'm'));
      }
      expect(r.stdout).to.not.include('not available in this version');
    }
    expect(bare.stdout).to.equal(help.stdout);
  });

  it("--help, of the CLI and of each command, says where settings come from: the project folder's .env or ENV_FILE", async () => {
    const [all, one] = await Promise.all([cli.run('--help'), cli.run('accounts', 'list', '--help')]);
    for (const r of [all, one]) {
      expect(r.code).to.equal(0);
      expect(r.stdout).to.match(/project folder's \.env or the file ENV_FILE\s+names/);
    }
  });

  it('every command group of the interface is built: none is listed as unavailable', () => {
    expect(UNAVAILABLE_GROUPS).to.deep.equal([]);
  });

  it('an unknown command exits 2 with the usage on stderr', async () => {
    const r = await cli.run('frobnicate', '--json');
    expect(r.code).to.equal(2);
    expect(r.stdout).to.equal('');
    expect(r.stderr).to.match(/^tracklane: unknown command "frobnicate"\n\nUsage: tracklane/);
  });
});
