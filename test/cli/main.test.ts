// The CLI as a whole: usage, unknown commands, and groups this build does not ship.
import { expect } from 'chai';
import { expectFailure, tempCli, type TempCli } from './run-cli.ts';

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
      for (const c of ['serve', 'accounts create', 'accounts list', 'accounts show', 'accounts update', 'accounts rotate-token',
        'events list', 'destinations add', 'destinations list', 'destinations remove', 'destinations update', 'rules check',
        'rules preview', 'deliveries list', 'deliveries replay', 'plugins list', 'customers list', 'customers new']) {
        expect(r.stdout).to.match(new RegExp(`^ {2}${c}\\b`, 'm'));
      }
      expect(r.stdout).to.match(/^ {2}deliveries list .*\(not available in this version\)$/m);
    }
    expect(bare.stdout).to.equal(help.stdout);
  });

  it('commands not built yet exit 1 saying so', async () => {
    const runs = await Promise.all(['deliveries list', 'customers new a b']
      .map((c) => cli.run(...c.split(' '), '--json')));
    for (const r of runs) expectFailure(r, 1, /^tracklane: "\w+" is not available in this version\n$/);
  });

  it('an unknown command exits 2 with the usage on stderr', async () => {
    const r = await cli.run('frobnicate', '--json');
    expect(r.code).to.equal(2);
    expect(r.stdout).to.equal('');
    expect(r.stderr).to.match(/^tracklane: unknown command "frobnicate"\n\nUsage: tracklane/);
  });
});
