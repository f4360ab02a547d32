// `restore FILE` as an operator types it: a backup comes back (and the store it replaced is
// kept, private), anything that is not a sound tracklane store this build can open is
// refused with the store untouched, and neither `restore` nor `migrate-store` runs while a
// server has the store open.
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { copyFileSync, existsSync, readdirSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectFailure, tempCli, type TempCli } from './run-cli.ts';
import { spawnServer } from '../helpers/spawn-server.ts';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.ts';

const names = async (cli: TempCli) => (await cli.json<{ name: string }[]>('accounts', 'list')).map((a) => a.name).sort();
const storeFiles = (cli: TempCli) => readdirSync(cli.dataDir).filter((f) => f.startsWith('tracklane') || f.startsWith('.')).sort();

describe('cli: restore', function () {
  this.timeout(120_000);
  const clis: TempCli[] = [];
  const made = (opts: Parameters<typeof tempCli>[0] = {}) => {
    const cli = tempCli(opts);
    clis.push(cli);
    return cli;
  };
  after(() => clis.forEach((c) => c.remove()));

  it('a backup comes back; the store it replaced is kept beside it; every file is private', async () => {
    const cli = made();
    await cli.json('accounts', 'create', '--name', 'Before backup');
    const backup = join(cli.dataDir, 'nightly.db');
    await cli.json('backup', backup);
    await cli.json('accounts', 'create', '--name', 'After backup');
    expect(await names(cli)).to.deep.equal(['After backup', 'Before backup']);

    const r = await cli.json<{ file: string; store: string; schema_version: number; integrity: string; replaced: string }>('restore', backup);
    const store = join(cli.dataDir, 'tracklane.db');
    expect(r).to.include({ file: backup, store, schema_version: MIGRATIONS.length, integrity: 'ok' });
    expect(r.replaced).to.match(new RegExp(`^${cli.dataDir}/tracklane-replaced-\\d{8}T\\d{6}Z\\.db$`));
    expect(await names(cli), 'the store holds what the backup held').to.deep.equal(['Before backup']);

    const kept = new Database(r.replaced, { readonly: true, fileMustExist: true });
    expect(kept.prepare('SELECT name FROM accounts ORDER BY name').pluck().all(), 'the replaced store, whole').to.deep.equal(['After backup', 'Before backup']);
    kept.close();
    for (const f of [store, r.replaced]) expect(statSync(f).mode & 0o777, f).to.equal(0o600);
    expect(statSync(cli.dataDir).mode & 0o777).to.equal(0o700);
    expect(readdirSync(cli.dataDir).filter((f) => f.endsWith('.tmp')), 'no temporary file left').to.deep.equal([]);

    const human = await cli.run('restore', backup);
    expect(human.code, human.stderr).to.equal(0);
    expect(human.stdout).to.match(new RegExp(`^restored ${backup} as ${store} \\(\\d+ bytes, schema version ${MIGRATIONS.length}, integrity ok\\)\\n`
      + `the store it replaced is kept as ${cli.dataDir}/tracklane-replaced-\\d{8}T\\d{6}Z(-2)?\\.db\\n$`));
    expect(readdirSync(cli.dataDir).filter((f) => /^tracklane-replaced-.*\.db$/.test(f)), 'a second restore keeps both').to.have.length(2);
  });

  it('refuses a file that is not a sound tracklane store this build knows, and leaves the store alone', async () => {
    const cli = made();
    await cli.json('accounts', 'create', '--name', 'Kept');
    const good = join(cli.dataDir, 'good.db');
    await cli.json('backup', good);
    const text = join(cli.dataDir, 'notes.txt');
    writeFileSync(text, 'DATA_DIR=/var/lib/tracklane\n'.repeat(200));
    const other = join(cli.dataDir, 'other.db');
    const o = new Database(other);
    o.exec('CREATE TABLE things (x)');
    o.pragma('user_version = 3');
    o.close();
    const newer = join(cli.dataDir, 'newer.db');
    copyFileSync(good, newer);
    const n = new Database(newer);
    n.pragma(`user_version = ${MIGRATIONS.length + 1}`);
    n.close();
    const cut = join(cli.dataDir, 'cut.db');
    copyFileSync(good, cut);
    truncateSync(cut, Math.floor(statSync(cut).size / 2));
    const before = storeFiles(cli);

    expectFailure(await cli.run('restore', join(cli.dataDir, 'missing.db')), 1, `${join(cli.dataDir, 'missing.db')} does not exist`);
    expectFailure(await cli.run('restore', text), 1, /^tracklane: .*notes\.txt is not a tracklane backup: file is not a database\n$/);
    expectFailure(await cli.run('restore', other), 1, `${other} is a SQLite database but not a tracklane store`);
    expectFailure(await cli.run('restore', newer), 1,
      `${newer} is at schema version ${MIGRATIONS.length + 1}, newer than this build's ${MIGRATIONS.length}: restore it with the tracklane version that made it, or a newer one`);
    expectFailure(await cli.run('restore', cut), 1, /^tracklane: .*cut\.db (is not a tracklane backup|failed its integrity check)/);
    expectFailure(await cli.run('restore', join(cli.dataDir, 'tracklane.db')), 1, `${join(cli.dataDir, 'tracklane.db')} is the store itself; name a backup`);
    expect(storeFiles(cli), 'nothing replaced, nothing left behind').to.deep.equal(before);
    expect(await names(cli)).to.deep.equal(['Kept']);
    const usage = await cli.run('restore');
    expect(usage.code).to.equal(2);
    expect(usage.stderr).to.match(/^tracklane: missing FILE\n\nUsage:\n {2}tracklane restore FILE/);
  });

  it('restores onto a machine with no store yet', async () => {
    const source = made();
    await source.json('accounts', 'create', '--name', 'Moved');
    const backup = join(source.dataDir, 'b.db');
    await source.json('backup', backup);
    const fresh = made({ store: false });
    const r = await fresh.json<{ replaced: string | null }>('restore', backup);
    expect(r.replaced).to.equal(null);
    expect(await names(fresh)).to.deep.equal(['Moved']);
  });

  it('restore and migrate-store refuse while a server has the store open (migrate-store copies anyway with --force)', async () => {
    const cli = made();
    await cli.json('accounts', 'create', '--name', 'Live');
    const backup = join(cli.dataDir, 'b.db');
    await cli.json('backup', backup);
    const server = await spawnServer({ DATA_DIR: cli.dataDir, WORKERS: '1' }, 60_000);
    try {
      await refusedWhileServing(cli, backup);
    } finally {
      server.child.kill('SIGTERM');
    }
    expect(await server.exited).to.equal(0);
    const r = await cli.json<{ replaced: string }>('restore', backup);
    expect(existsSync(r.replaced)).to.equal(true);
  });
});

/** With a server running on the store: restore refuses (and touches nothing), migrate-store refuses unless --force. */
async function refusedWhileServing(cli: TempCli, backup: string): Promise<void> {
  const store = join(cli.dataDir, 'tracklane.db');
  const before = storeFiles(cli);
  expectFailure(await cli.run('restore', backup), 1, 'a server (or another tracklane command) has the store open: stop it first, then restore');
  expect(storeFiles(cli)).to.deep.equal(before);
  const pg = 'postgres://postgres@127.0.0.1:1/none';
  expectFailure(await cli.run('migrate-store', '--to', pg), 1, `a server (or another tracklane command) has the store ${store} open, `
    + 'and what it writes after the copy would stay behind: stop it first (or pass --force to copy anyway)');
  const forced = await cli.run('migrate-store', '--to', pg, '--force');
  expect(forced.code).to.equal(1);
  expect(forced.stderr, 'past the check, to the (unreachable) target').to.not.match(/has the store .* open/);
}
