// Event appends on both paths: the store's own connection and the writer thread. The same
// contract runs against both; the thread's own failure modes (crash, restart, start-up
// failure, no reply, close) and its loading from a real `node src/index.cjs`
// process are checked below.
import { expect } from 'chai';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getEnvironmentData, threadId as mainThreadId } from 'node:worker_threads';
import { processWriteGate } from '../../src/store/sqlite/write-gate.ts';
import Database from 'better-sqlite3';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { startServer } from '../../src/server.ts';
import { createAccountService } from '../../src/accounts/account-service.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { sqliteFile } from '../../src/store/open-store.ts';
import { defaultWriterThread, DEFAULT_WRITER_THREAD, openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { prepareRow } from '../../src/store/prepare-row.ts';
import { startWriterThread, type WriterThread } from '../../src/store/sqlite/writer-thread.ts';
import { createEventWriter } from '../../src/store/event-writer.ts';
import type { EventRecord, Store } from '../../src/store/types.ts';
import { tempDir } from '../helpers/test-server.ts';
import { spawnServer } from '../helpers/spawn-server.ts';

const row = (i: number, over: Partial<EventRecord> = {}): EventRecord => ({
  id: `id-${i}`, scriptId: 'ABCD1234', name: 'lead_created', eventId: `L-${i}`, status: 'accepted', source: 'event',
  requestId: `r${i}`, receivedAt: 1_700_000_000_000 + i, errors: [], warnings: [], payload: { i }, ...over,
});

const turn = () => new Promise((r) => setImmediate(r));

for (const writerThread of [false, true]) {
  describe(`event store append (${writerThread ? 'writer thread' : 'in-process'})`, () => {
    let dir: string;
    let file: string;
    let store: Store;
    const open = (busyTimeoutMs?: number) => (store = openSqliteStore({ file, busyTimeoutMs, writerThread }));
    beforeEach(() => {
      dir = tempDir();
      file = join(dir, 'db.sqlite');
    });
    afterEach(async () => {
      await store?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('commits one turn of writes as one transaction, with dedup and seen products decided inside it', async () => {
      open();
      const batches: number[] = [];
      const writer = createEventWriter(store.events, { onBatch: (n) => batches.push(n) });
      const viewed = row(2, { name: 'product_viewed', eventId: null, payload: { products: [{ id: 'P-1' }, { id: 'P-2' }] } });
      const rejected = row(3, { name: 'product_viewed', eventId: null, status: 'rejected', payload: { products: [{ id: 'P-9' }] } });
      const statuses = await Promise.all([
        writer.write(row(0)), writer.write(row(1, { eventId: 'L-0' })), writer.write(viewed), writer.write(rejected),
        ...Array.from({ length: 46 }, (_, i) => writer.write(row(10 + i))),
      ]);
      expect(batches).to.deep.equal([50]);
      expect(statuses.slice(0, 4)).to.deep.equal(['accepted', 'duplicate', 'accepted', 'rejected']);
      expect([...(await store.events.seenProducts('ABCD1234', ['P-1', 'P-2', 'P-9']))]).to.deep.equal(['P-1', 'P-2']);
      expect(await store.events.isDuplicate('ABCD1234', 'lead_created', 'L-0', 1_700_000_000_100)).to.equal(true);
      const reader = new Database(file, { readonly: true });
      expect(reader.prepare('SELECT count(*) n FROM events').get()).to.deep.equal({ n: 50 });
      reader.close();
      // The accepted rows are owed to the fan-out, after its cursor (migration 22): no queue row each.
      expect(await store.deliveries.dispatchBacklog()).to.equal(48);
      expect((await store.events.list({ eventId: 'L-0' })).map((e) => e.status).sort()).to.deep.equal(['accepted', 'duplicate']);
    });

    it('splits large bursts at maxBatch', async () => {
      open();
      const batches: number[] = [];
      const writer = createEventWriter(store.events, { maxBatch: 20, onBatch: (n) => batches.push(n) });
      await Promise.all(Array.from({ length: 45 }, (_, i) => writer.write(row(i))));
      expect(batches).to.deep.equal([20, 20, 5]);
    });

    it('rejects the whole batch with the SQLite error when the file is locked, stores none, and recovers', async () => {
      open(50);
      const writer = createEventWriter(store.events);
      const blocker = new Database(file);
      blocker.exec('BEGIN EXCLUSIVE');
      const results = await Promise.allSettled([writer.write(row(1)), writer.write(row(2))]);
      expect(results.map((r) => r.status)).to.deep.equal(['rejected', 'rejected']);
      const reason = (results[0] as PromiseRejectedResult).reason as Error & { code?: string };
      expect(reason.code).to.equal('SQLITE_BUSY');
      blocker.exec('ROLLBACK');
      expect(await writer.write(row(3))).to.equal('accepted');
      expect(blocker.prepare('SELECT event_id FROM events').all()).to.deep.equal([{ event_id: 'L-3' }]);
      blocker.close();
    });

    it('close() lets batches in flight commit, then refuses appends', async () => {
      open();
      const pending = store.events.append([row(1), row(2)]);
      const closed = store.close();
      expect(await pending).to.deep.equal(['accepted', 'accepted']);
      await closed;
      await store.close();
      await store.events.append([row(3)]).then(
        () => expect.fail('append after close must reject'),
        (e: Error) => expect(e).to.be.an('error'),
      );
      const reader = new Database(file, { readonly: true });
      expect(reader.prepare('SELECT count(*) n FROM events').get()).to.deep.equal({ n: 2 });
      reader.close();
    });

    it('answers 503 over HTTP when the store cannot commit, then 200 once it can', async () => {
      const dataDir = join(dir, 'data');
      const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
      store = openSqliteStore({ file: sqliteFile(config), busyTimeoutMs: 100, writerThread });
      const { account, accessToken } = await createAccountService(store).create({ name: 'Locked', tier: 'FLEX', addon: true });
      const running = await startServer(config, { logger: createLogger('silent'), store });
      const post = (id: string) => fetch(`${running.url}${INTAKE_PATHS.event}?id=${account.scriptId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-access-token': accessToken },
        body: JSON.stringify({ event: { name: 'lead_created', id }, context: { environment: 'prod', data_source: 'crm' } }),
      });
      const blocker = new Database(sqliteFile(config));
      blocker.exec('BEGIN EXCLUSIVE');
      try {
        const r = await post('LOCKED-1');
        expect(r.status).to.equal(503);
        expect(r.headers.get('retry-after')).to.equal('5');
      } finally {
        blocker.exec('ROLLBACK');
        blocker.close();
      }
      expect((await post('LOCKED-1')).status).to.equal(200);
      await running.close(1000);
      const stored = new Database(sqliteFile(config), { readonly: true });
      expect(stored.prepare('SELECT event_id, status FROM events').all()).to.deep.equal([{ event_id: 'LOCKED-1', status: 'accepted' }]);
      stored.close();
    });
  });
}

describe('event writer thread', () => {
  let dir: string;
  let file: string;
  let thread: WriterThread | undefined;
  let blocker: Database.Database | undefined;
  beforeEach(async () => {
    dir = tempDir();
    file = join(dir, 'db.sqlite');
    // Creates the schema; the thread expects a migrated database.
    await openSqliteStore({ file, writerThread: false }).close();
  });
  afterEach(async () => {
    if (blocker?.open) blocker.close();
    await thread?.close();
    thread = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  const start = (over: { busyTimeoutMs?: number; replyTimeoutMs?: number } = {}) =>
    (thread = startWriterThread({ file, busyTimeoutMs: 5000, dedupWindowMs: 86_400_000, ...over }));
  const lock = () => {
    blocker = new Database(file);
    blocker.exec('BEGIN IMMEDIATE');
    return blocker;
  };
  const count = () => {
    const db = new Database(file, { readonly: true });
    const n = (db.prepare('SELECT count(*) n FROM events').get() as { n: number }).n;
    db.close();
    return n;
  };

  it('defaults to on unless TRACKLANE_WRITER_THREAD says otherwise', () => {
    expect(DEFAULT_WRITER_THREAD).to.equal(true);
    expect(defaultWriterThread({})).to.equal(DEFAULT_WRITER_THREAD);
    expect(defaultWriterThread({ TRACKLANE_WRITER_THREAD: '1' })).to.equal(true);
    expect(defaultWriterThread({ TRACKLANE_WRITER_THREAD: '0' })).to.equal(false);
    expect(() => defaultWriterThread({ TRACKLANE_WRITER_THREAD: 'yes' })).to.throw(/TRACKLANE_WRITER_THREAD/);
  });

  it('commits on another thread with its own connection (WAL, synchronous=FULL)', async () => {
    const t = start();
    expect(await t.append([row(1)].map(prepareRow))).to.deep.equal(['accepted']);
    expect(t.threadId).to.be.a('number').and.not.equal(mainThreadId);
    expect(count()).to.equal(1);
  });

  it('keeps the event loop free while a commit waits, and gathers the next batch meanwhile', async () => {
    const store = openSqliteStore({ file, writerThread: true });
    try {
      const batches: number[] = [];
      const writer = createEventWriter(store.events, { onBatch: (n) => batches.push(n) });
      await writer.write(row(100)); // the thread is up
      batches.length = 0;
      lock();
      const first = writer.write(row(0));
      await turn(); // batch 1 (one row) is posted; the thread waits for the lock
      // Timers keep firing while the thread waits (in-process, this thread would sit in
      // SQLite's busy handler for the 5 s busy timeout).
      const t0 = Date.now();
      const later: Promise<unknown>[] = [];
      for (let i = 1; i <= 20; i++) {
        later.push(writer.write(row(i)));
        await new Promise((r) => setTimeout(r, 1));
      }
      expect(Date.now() - t0).to.be.below(1000);
      blocker!.exec('COMMIT');
      await Promise.all([first, ...later]);
      expect(batches[0]).to.equal(1);
      // Everything written while the thread waited on the lock went out as one batch.
      expect(batches.slice(1)).to.deep.equal([20]);
    } finally {
      await store.close();
    }
  });

  it('a thread that dies rejects the batches it held and is replaced at once', async () => {
    const t = start();
    await t.append([row(0)].map(prepareRow));
    const firstThread = t.threadId;
    const died = t.crash();
    const lost = t.append([row(1)].map(prepareRow)); // posted behind the crash: never handled
    const err = await lost.then(() => expect.fail('must reject'), (e: Error) => e);
    expect(err.message).to.match(/event writer thread exited with code 1: crash requested/);
    await died;
    expect(t.starts).to.equal(2);
    expect(t.threadId).to.be.a('number').and.not.equal(firstThread);
    expect(await t.append([row(2)].map(prepareRow))).to.deep.equal(['accepted']);
    expect(count()).to.equal(2);
  });

  it('a thread that dies holding the process\'s write gate has it freed on its exit, so the next commit does not wait out its bound', async () => {
    const t = start();
    await t.append([row(0)].map(prepareRow));
    const gate = processWriteGate();
    const words = new Int32Array(getEnvironmentData('tracklane:sqlite-write-gate') as SharedArrayBuffer);
    const dying = t.threadId!;
    expect(Atomics.compareExchange(words, 0, 0, dying + 1), 'free before').to.equal(0); // as if it died inside a commit
    await t.crash();
    expect(Atomics.load(words, 0), 'freed by the exit handler').to.equal(0);
    const before = gate.overruns;
    expect(await t.append([row(1)].map(prepareRow))).to.deep.equal(['accepted']);
    gate.run(() => undefined, { urgent: true, waitMs: 5000 });
    expect(gate.overruns).to.equal(before);
  });

  it('a batch without a reply in time is rejected; the thread carries on', async () => {
    const t = start({ replyTimeoutMs: 200 });
    // Batches the test means to succeed are sent again while the 200 ms runs out for a reason
    // of the machine's (a thread starting slowly under load): the same row, so a late commit
    // of an earlier try is a duplicate, not a second event.
    const settled = async (i: number): Promise<string[]> => {
      for (let tries = 1; ; tries++) {
        try {
          return await t.append([row(i)].map(prepareRow));
        } catch (e) {
          if (tries >= 50 || !/no reply in 200 ms/.test((e as Error).message)) throw e;
        }
      }
    };
    await settled(0);
    lock();
    const t0 = Date.now();
    const err = await t.append([row(1)].map(prepareRow)).then(() => expect.fail('must reject'), (e: Error) => e);
    expect(err.message).to.match(/no reply in 200 ms/);
    expect(Date.now() - t0).to.be.below(2000);
    blocker!.exec('ROLLBACK');
    expect(String(await settled(2))).to.be.oneOf(['accepted', 'duplicate']);
    expect(t.starts).to.equal(1);
    // The rejected batch committed late, as after a crash between commit and reply: the
    // client's retry is what dedup is for (a try sent again is stored as a duplicate).
    const db = new Database(file, { readonly: true });
    const events = (db.prepare("SELECT count(*) n FROM events WHERE status <> 'duplicate'").get() as { n: number }).n;
    db.close();
    expect(events).to.equal(3);
  });

  it('a thread that cannot open the database rejects the batch, and is retried only on the next batch', async () => {
    writeFileSync(join(dir, 'not-a-dir'), '');
    thread = startWriterThread({ file: join(dir, 'not-a-dir', 'db.sqlite'), busyTimeoutMs: 100, dedupWindowMs: 1 });
    const err = await thread.append([row(1)].map(prepareRow)).then(() => expect.fail('must reject'), (e: Error) => e);
    expect(err.message).to.match(/event writer thread exited with code 1: (EEXIST|ENOTDIR)/);
    await new Promise((r) => setTimeout(r, 200));
    expect(thread.starts).to.equal(1);
    await thread.append([row(2)].map(prepareRow)).then(() => expect.fail('must reject'), () => undefined);
    expect(thread.starts).to.equal(2);
  });

  it('loads in the real process (node src/index.cjs), and SIGTERM commits every acknowledged event', async function () {
    this.timeout(30_000);
    const dataDir = join(dir, 'data');
    const boot = openSqliteStore({ file: join(dataDir, 'tracklane.db'), writerThread: false });
    const { account, accessToken } = await createAccountService(boot).create({ name: 'Thread', tier: 'FLEX', addon: true });
    await boot.close();
    const server = await spawnServer({ DATA_DIR: dataDir, TRACKLANE_WRITER_THREAD: '1' });
    try {
      const send = (i: number) => fetch(`${server.url}${INTAKE_PATHS.event}?id=${account.scriptId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-access-token': accessToken },
        body: JSON.stringify({ event: { name: 'lead_created', id: `T-${i}` }, context: { environment: 'prod', data_source: 'crm' } }),
      }).then((r) => r.status);
      // With TRACKLANE_WRITER_THREAD=1 every append goes through the thread: a thread that
      // failed to load would turn each of these into a 503.
      const statuses = await Promise.all(Array.from({ length: 40 }, (_, i) => send(i)));
      expect(statuses.every((s) => s === 200), statuses.join()).to.equal(true);
    } finally {
      server.child.kill('SIGTERM');
    }
    expect(await server.exited).to.equal(0);
    const db = new Database(join(dataDir, 'tracklane.db'), { readonly: true });
    expect(db.prepare("SELECT count(*) n FROM events WHERE status = 'accepted'").get()).to.deep.equal({ n: 40 });
    db.close();
  });
});
