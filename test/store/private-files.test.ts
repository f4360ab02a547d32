// The SQLite store holds destinations' secrets and events' identifiers: its folder is 0700
// and its files (database, -wal, -shm, backups) 0600 whatever the process umask; a store
// an older version (or a restore with cp) left 0644 in a 0755 folder is tightened on open,
// and what was tightened is reported once.
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { chmodSync, existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { backupSqlite } from '../../src/store/sqlite/backup.ts';
import type { ModeChange } from '../../src/store/sqlite/private-files.ts';
import type { Store } from '../../src/store/types.ts';
import { tempDir } from '../helpers/test-server.ts';
import { loadConfig } from '../../src/config.ts';
import { startServer } from '../../src/server.ts';
import { captureLogger } from '../helpers/log-capture.ts';
import { shippedFolderEnv } from '../helpers/shipped-folders.ts';

const modeOf = (path: string): string => (statSync(path).mode & 0o777).toString(8);
const NEW_ACCOUNT = { scriptId: 'PRIV0001', name: 'shop', tier: 'FLEX' as const, addon: false, host: null, country: null, taxRate: null };

describe('SQLite store files are private', () => {
  let root: string;
  let previousUmask: number;
  let store: Store | undefined;
  beforeEach(() => {
    root = tempDir('tl-private-');
    // The permissive umask most services run under: files would be 0644, folders 0755.
    previousUmask = process.umask(0o022);
  });
  afterEach(async () => {
    await store?.close();
    store = undefined;
    process.umask(previousUmask);
    rmSync(root, { recursive: true, force: true });
  });

  it('creates a fresh store folder 0700 and the database, -wal and -shm 0600 under umask 022', async () => {
    const dir = join(root, 'data');
    const file = join(dir, 'tracklane.db');
    const told: ModeChange[][] = [];
    store = openSqliteStore({ file, onModesTightened: (c) => told.push(c) });
    // A write through the writer thread, so its connection has opened the files too.
    await store.accounts.create(NEW_ACCOUNT, 'a'.repeat(64), 'tl_');
    await store.events.append([]);
    expect(existsSync(`${file}-wal`) && existsSync(`${file}-shm`), 'WAL files exist').to.equal(true);
    expect({ dir: modeOf(dir), db: modeOf(file), wal: modeOf(`${file}-wal`), shm: modeOf(`${file}-shm`) })
      .to.deep.equal({ dir: '700', db: '600', wal: '600', shm: '600' });
    expect(told, 'nothing to tighten in a fresh store').to.deep.equal([]);
  });

  it('tightens an existing 0644 store in a 0755 folder on open, and reports it once', async () => {
    const dir = join(root, 'data');
    const file = join(dir, 'tracklane.db');
    store = openSqliteStore({ file });
    await store.accounts.create(NEW_ACCOUNT, 'a'.repeat(64), 'tl_');
    await store.close();
    store = undefined;
    // As an older version left it, with another process's WAL still beside it.
    const other = new Database(file);
    other.pragma('journal_mode = WAL');
    other.pragma('wal_autocheckpoint = 0');
    other.exec("UPDATE accounts SET name = 'renamed'");
    for (const p of [file, `${file}-wal`, `${file}-shm`]) chmodSync(p, 0o644);
    chmodSync(dir, 0o755);
    try {
      const told: ModeChange[][] = [];
      store = openSqliteStore({ file, onModesTightened: (c) => told.push(c) });
      expect({ dir: modeOf(dir), db: modeOf(file), wal: modeOf(`${file}-wal`), shm: modeOf(`${file}-shm`) })
        .to.deep.equal({ dir: '700', db: '600', wal: '600', shm: '600' });
      expect(told).to.have.length(1);
      expect(told[0].map((c) => [c.path, c.from, c.to, c.error])).to.have.deep.members([
        [dir, '0755', '0700', undefined], [file, '0644', '0600', undefined],
        [`${file}-wal`, '0644', '0600', undefined], [`${file}-shm`, '0644', '0600', undefined],
      ]);
      expect((await store.accounts.get(NEW_ACCOUNT.scriptId))?.name, 'the store is the same').to.equal('renamed');
    } finally {
      other.close();
    }
  });

  it('writes a backup 0600 under umask 022, also when --force replaces a 0644 file', async () => {
    const file = join(root, 'data', 'tracklane.db');
    store = openSqliteStore({ file });
    await store.accounts.create(NEW_ACCOUNT, 'a'.repeat(64), 'tl_');
    const target = join(root, 'backup.db');
    backupSqlite(file, target);
    expect(modeOf(target)).to.equal('600');
    rmSync(target);
    writeFileSync(target, '');
    chmodSync(target, 0o644);
    backupSqlite(file, target, { force: true });
    expect(modeOf(target)).to.equal('600');
  });

  it('the server logs once, as a warning, what it tightened at start', async () => {
    const dataDir = join(root, 'data');
    const file = join(dataDir, 'tracklane.db');
    store = openSqliteStore({ file });
    await store.close();
    store = undefined;
    chmodSync(file, 0o644);
    chmodSync(dataDir, 0o755);
    const log = captureLogger('info');
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DELIVERY_THREAD: '0', ...shippedFolderEnv() });
    const running = await startServer(config, { logger: log.logger });
    try {
      const told = log.lines.filter((l) => /readable by other users/.test(String(l.msg)));
      expect(told.map((l) => l.level)).to.deep.equal([40]);
      expect(told[0].changes.map((c: ModeChange) => c.path)).to.have.members([dataDir, file]);
      expect([modeOf(dataDir), modeOf(file)]).to.deep.equal(['700', '600']);
    } finally {
      await running.close(500);
    }
  });
});
