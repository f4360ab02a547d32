// The SQLite WAL stays bounded while the store is open: a reader holding an old snapshot lets
// the log grow past its bound, and once it lets go the periodic checkpoint brings the file
// back under it (on the writer thread, or on the store's own connection without one).
// /metrics reports the file's size.
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { sqliteFile } from '../../src/store/open-store.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { EventRecord, Store } from '../../src/store/types.ts';
import { startTestApp, tempDir, waitFor } from '../helpers/test-app.ts';

const LIMIT = 256 * 1024;

const row = (i: number): EventRecord => ({
  id: `id-${i}`, scriptId: 'ABCD1234', name: 'lead_created', eventId: `L-${i}`, status: 'accepted', source: 'event',
  requestId: `r${i}`, receivedAt: 1_700_000_000_000 + i, errors: [], warnings: [], // Random padding: payloads are stored deflated, and a repeated character would shrink to nothing.
  payload: { i, pad: randomBytes(1_500).toString('base64') },
});

const walSize = (file: string): number => {
  try {
    return statSync(`${file}-wal`).size;
  } catch {
    return 0;
  }
};

for (const writerThread of [true, false]) {
  describe(`SQLite WAL bound (${writerThread ? 'writer thread' : 'in-process'})`, function () {
    this.timeout(30_000);
    let dir: string;
    let file: string;
    let store: Store;
    let reader: Database.Database;
    beforeEach(() => {
      dir = tempDir('tl-wal-');
      file = join(dir, 'tracklane.db');
      store = openSqliteStore({ file, writerThread, wal: { limitBytes: LIMIT, everyMs: 50 } });
      reader = new Database(file, { readonly: true });
    });
    afterEach(async () => {
      if (reader.open) reader.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('grows past the limit while a reader holds an old snapshot, and is cut back under it once the reader lets go', async () => {
      // A read transaction pins its snapshot: no checkpoint can go past it, so the log grows.
      reader.prepare('BEGIN').run();
      reader.prepare('SELECT count(*) FROM events').get();
      let i = 0;
      while (walSize(file) <= 4 * LIMIT) {
        await store.events.append(Array.from({ length: 50 }, () => row(i++)));
      }
      const grown = walSize(file);
      expect(store.walBytes!(), 'the store reports the file as it is').to.equal(grown);
      reader.prepare('COMMIT').run();

      const bounded = await waitFor(() => walSize(file) <= LIMIT, 10_000, 20);
      expect(bounded, `WAL ${walSize(file)} B after the reader let go (grew to ${grown} B, limit ${LIMIT} B)`).to.equal(true);
      // Nothing is lost by the checkpoint: every event is there.
      expect((reader.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n).to.equal(i);
    });
  });
}

describe('SQLite WAL size in /metrics', () => {
  it('tracklane_sqlite_wal_bytes is the size of the WAL file', async () => {
    const s = await startTestApp();
    try {
      const a = await s.account();
      const r = await s.post(INTAKE_PATHS.event, { event: { name: 'lead_created', id: 'L-1' }, context: { environment: 'prod', data_source: 'crm' } }, { account: a });
      expect(r.status, r.text).to.equal(200);
      const text = await (await fetch(`${s.url}/metrics`)).text();
      const m = /^tracklane_sqlite_wal_bytes (\d+)$/m.exec(text);
      expect(m, 'the gauge in /metrics').to.not.equal(null);
      expect(Number(m![1])).to.equal(walSize(sqliteFile(s.config))).and.to.be.greaterThan(0);
    } finally {
      await s.close();
    }
  });
});
