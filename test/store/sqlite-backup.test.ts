// backupSqlite on a real SQLite file in WAL mode: the copy is one self-contained file that
// opens as the same store (rows, schema version), taken while a connection still has
// commits in the WAL; an existing file is refused (and left alone) unless forced; the
// store itself, a missing store or folder are refused; nothing half-written stays behind.
import { expect } from 'chai';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { openConnection } from '../../src/store/sqlite/connection.ts';
import { MIGRATIONS, migrate } from '../../src/store/sqlite/migrations.ts';
import { backupSqlite, BackupError } from '../../src/store/sqlite/backup.ts';
import { tempDir } from '../helpers/test-server.ts';

const T0 = 1_800_000_000_000;

describe('backupSqlite', () => {
  let dir: string;
  let source: string;
  let live: ReturnType<typeof openConnection>;
  beforeEach(() => {
    dir = tempDir('tl-backup-');
    source = join(dir, 'tracklane.db');
    live = openConnection(source);
    migrate(live);
    // Kept open and never checkpointed: these commits are in the -wal file only.
    live.pragma('wal_autocheckpoint = 0');
    const add = live.prepare(`INSERT INTO accounts (script_id, name, tier, created_at, updated_at) VALUES (?, ?, 'FLEX', ${T0}, ${T0})`);
    for (let i = 0; i < 50; i++) add.run(`ACCT${String(i).padStart(4, '0')}`, `shop ${i}`);
  });
  afterEach(() => {
    live.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const accountsIn = (file: string): number => {
    const db = openConnection(file);
    try {
      return (db.prepare('SELECT count(*) AS n FROM accounts').get() as { n: number }).n;
    } finally {
      db.close();
    }
  };

  it('copies every committed row into one file that opens as the store, without the -wal beside it', () => {
    expect(existsSync(`${source}-wal`)).to.equal(true);
    const r = backupSqlite(source, join(dir, 'backup.db'));
    expect(r).to.include({ file: join(dir, 'backup.db'), source, schema_version: MIGRATIONS.length, integrity: 'ok' });
    expect(r.bytes).to.equal(readFileSync(r.file).length);
    expect(Date.parse(r.snapshot_at)).to.be.at.most(Date.parse(r.finished_at));
    expect(readdirSync(dir).sort(), 'no temporary file left').to.deep.equal(['backup.db', 'tracklane.db', 'tracklane.db-shm', 'tracklane.db-wal']);
    expect(readFileSync(r.file).subarray(18, 20), 'a rollback-journal file: no -wal needed').to.deep.equal(Buffer.from([1, 1]));

    // Restored as the docs say: the copy alone, under the store's name, in a folder of its own.
    const restored = join(dir, 'restored', 'tracklane.db');
    mkdirSync(dirname(restored));
    copyFileSync(r.file, restored);
    expect(accountsIn(restored)).to.equal(50);
    const db = openConnection(restored);
    expect(db.pragma('user_version', { simple: true })).to.equal(MIGRATIONS.length);
    expect(() => migrate(db), 'nothing left to migrate').to.not.throw();
    db.close();
  });

  it('refuses an existing file and leaves it as it was; --force replaces it', () => {
    const file = join(dir, 'backup.db');
    writeFileSync(file, 'an older backup');
    let err: unknown;
    try {
      backupSqlite(source, file);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(BackupError);
    expect((err as Error).message).to.equal(`${file} exists; pass --force to replace it`);
    expect(readFileSync(file, 'utf8')).to.equal('an older backup');

    const r = backupSqlite(source, file, { force: true });
    expect(r.bytes).to.be.greaterThan(1000);
    expect(accountsIn(file)).to.equal(50);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).to.deep.equal([]);
  });

  it('refuses the store itself, a missing store and a missing folder', () => {
    const refusal = (from: string, to: string): string => {
      try {
        backupSqlite(from, to, { force: true });
      } catch (e) {
        expect(e).to.be.instanceOf(BackupError);
        return (e as Error).message;
      }
      throw new Error('not refused');
    };
    expect(refusal(source, source)).to.equal(`${source} is the store itself; name another file`);
    expect(refusal(source, `${source}-wal`)).to.equal(`${source}-wal is the store itself; name another file`);
    expect(refusal(join(dir, 'none.db'), join(dir, 'b.db'))).to.equal(`no SQLite store at ${join(dir, 'none.db')}`);
    expect(refusal(source, join(dir, 'no/such/b.db'))).to.equal(`the folder ${join(dir, 'no/such')} does not exist`);
    expect(accountsIn(source)).to.equal(50);
  });
});
