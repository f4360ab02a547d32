// `backup` and `migrate-store` as an operator types them: --json output, an existing file
// refused unless --force, PostgreSQL pointed to pg_dump, and wrong command lines exit 2.
import { expect } from 'chai';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectFailure, tempCli, type TempCli } from './run-cli.ts';

describe('cli: backup and migrate-store', function () {
  this.timeout(60_000);
  let cli: TempCli;
  before(async () => {
    cli = tempCli();
    await cli.json('accounts', 'create', '--name', 'Backed up', '--tier', 'FLEX');
  });
  after(() => cli.remove());

  it('backup FILE --json prints the file, its size and the snapshot; an existing FILE only with --force', async () => {
    const file = join(cli.dataDir, 'copy.db');
    const r = await cli.json<{ file: string; bytes: number; source: string; schema_version: number; integrity: string; snapshot_at: string }>('backup', file);
    expect(r).to.include({ file, source: join(cli.dataDir, 'tracklane.db'), integrity: 'ok' });
    expect(r.bytes).to.equal(readFileSync(file).length);
    expect(r.schema_version).to.be.greaterThan(0);

    writeFileSync(file, 'keep me');
    expectFailure(await cli.run('backup', file), 1, `${file} exists; pass --force to replace it`);
    expect(readFileSync(file, 'utf8')).to.equal('keep me');
    const human = await cli.run('backup', file, '--force');
    expect(human.code, human.stderr).to.equal(0);
    expect(human.stdout).to.match(new RegExp(`^backed up .*tracklane\\.db to ${file} \\(\\d+ bytes, schema version \\d+, integrity ok\\)\\nit holds everything committed before \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\n$`));
  });

  it('a command that opens a store others can read makes it private and says so on stderr, once', async () => {
    const db = join(cli.dataDir, 'tracklane.db');
    chmodSync(db, 0o644);
    chmodSync(cli.dataDir, 0o755);
    const first = await cli.run('accounts', 'list', '--json');
    expect(first.code, first.stderr).to.equal(0);
    expect(JSON.parse(first.stdout), '--json output unchanged').to.have.length(1);
    expect(first.stderr).to.match(/^tracklane: the store was readable by other users; tightened .*tracklane\.db 0644 -> 0600/m);
    expect([statSync(cli.dataDir).mode & 0o777, statSync(db).mode & 0o777]).to.deep.equal([0o700, 0o600]);
    const again = await cli.run('accounts', 'list', '--json');
    expect(again.stderr, 'nothing left to tighten').to.not.match(/readable by other users/);
  });

  it('backup with DATABASE_URL set says to use pg_dump; without FILE it is a usage error', async () => {
    const pg = tempCli({ databaseUrl: 'postgres://postgres@127.0.0.1:1/none', store: false });
    try {
      expectFailure(await pg.run('backup', join(pg.dataDir, 'x.db')), 1, /pg_dump/);
    } finally {
      pg.remove();
    }
    const r = await cli.run('backup');
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(/^tracklane: missing FILE\n\nUsage:\n {2}tracklane backup FILE/);
  });

  it('migrate-store needs --to with a postgres:// URL, and refuses when the store is PostgreSQL already', async () => {
    for (const args of [[], ['--to', 'mysql://x/y']]) {
      const r = await cli.run('migrate-store', ...args);
      expect(r.code, args.join(' ')).to.equal(2);
      expect(r.stderr).to.match(/^tracklane: (missing --to postgres:\/\/…|--to must be a postgres:\/\/ or postgresql:\/\/ URL)\n\nUsage:\n {2}tracklane migrate-store --to/);
    }
    const pg = tempCli({ databaseUrl: 'postgres://postgres@127.0.0.1:1/none', store: false });
    try {
      expectFailure(await pg.run('migrate-store', '--to', 'postgres://postgres@127.0.0.1:1/other'), 1, /DATABASE_URL is set, so the store is PostgreSQL already/);
    } finally {
      pg.remove();
    }
  });
});
