import { expect } from 'chai';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { createEventWriter } from '../../src/store/event-writer.ts';
import type { EventRecord } from '../../src/store/types.ts';
import { tempDir } from '../helpers/test-server.ts';

const row = (i: number, scriptId = 'ABCD1234'): EventRecord => ({
  id: `id-${i}`, scriptId, name: 'lead_created', eventId: `L-${i}`, status: 'accepted', source: 'event',
  requestId: `r${i}`, receivedAt: 1_700_000_000_000 + i, errors: [], warnings: [], payload: { i },
});

describe('event writer (group commit on SQLite)', () => {
  let dir: string;
  beforeEach(() => { dir = tempDir(); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('opens the database in WAL mode with synchronous=FULL', async () => {
    const store = openSqliteStore({ file: join(dir, 'db.sqlite') });
    await store.close();
    const db = new Database(join(dir, 'db.sqlite'));
    expect(db.pragma('journal_mode', { simple: true })).to.equal('wal');
    expect(db.pragma('user_version', { simple: true })).to.be.greaterThan(0);
    db.close();
  });

  it('commits writes of one turn in one transaction and resolves each after the commit', async () => {
    const store = openSqliteStore({ file: join(dir, 'db.sqlite') });
    const batches: number[] = [];
    const writer = createEventWriter(store.events, { onBatch: (n) => batches.push(n) });
    await Promise.all(Array.from({ length: 50 }, (_, i) => writer.write(row(i))));
    expect(batches).to.deep.equal([50]);
    const reader = new Database(join(dir, 'db.sqlite'), { readonly: true });
    expect(reader.prepare('SELECT count(*) n FROM events').get()).to.deep.equal({ n: 50 });
    reader.close();
    await writer.drain();
    await store.close();
  });

  it('tells delivery after a commit that stored accepted events, each one queued by then; a commit of rejected or duplicate events only wakes nothing', async () => {
    const store = openSqliteStore({ file: join(dir, 'db.sqlite') });
    const queuedAtWake: number[] = [];
    const writer = createEventWriter(store.events, { onCommitted: () => void store.deliveries.dispatchBacklog().then((n) => queuedAtWake.push(n)) });
    await Promise.all([writer.write(row(1)), writer.write(row(2))]);
    await writer.write({ ...row(3), status: 'rejected' });
    await writer.write(row(1)); // the same event id again: a duplicate
    await writer.write(row(4));
    await writer.drain();
    await new Promise((r) => setImmediate(r));
    expect(queuedAtWake, 'two wakes: the first commit (2 queued), the last (3)').to.deep.equal([2, 3]);
    await store.close();
  });

  it('splits large bursts at maxBatch', async () => {
    const store = openSqliteStore({ file: join(dir, 'db.sqlite') });
    const batches: number[] = [];
    const writer = createEventWriter(store.events, { maxBatch: 20, onBatch: (n) => batches.push(n) });
    await Promise.all(Array.from({ length: 45 }, (_, i) => writer.write(row(i))));
    expect(batches).to.deep.equal([20, 20, 5]);
    await store.close();
  });

  it('rejects every write of a batch whose transaction failed, and stores none of them', async () => {
    const file = join(dir, 'db.sqlite');
    const store = openSqliteStore({ file, busyTimeoutMs: 50 });
    const writer = createEventWriter(store.events);
    const blocker = new Database(file);
    blocker.exec('BEGIN EXCLUSIVE');
    const results = await Promise.allSettled([writer.write(row(1)), writer.write(row(2))]);
    expect(results.map((r) => r.status)).to.deep.equal(['rejected', 'rejected']);
    blocker.exec('ROLLBACK');
    await writer.write(row(3));
    expect(blocker.prepare('SELECT event_id FROM events').all()).to.deep.equal([{ event_id: 'L-3' }]);
    blocker.close();
    await store.close();
  });
});
