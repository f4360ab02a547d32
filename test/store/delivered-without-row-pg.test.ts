// PostgreSQL's side of "delivered without a row" where its SQL differs from SQLite's: a group
// commit of attempt records stays one statement when some of its deliveries get a row and
// others are only listed by their attempt (decided in the statement, by the rows its snapshot
// shows), the attempt's columns as recorded, and the upgrade to version 13 (delivered rows stored
// before keep showing next to the derived ones). The behaviour both stores share is in
// delivered-without-row.test.ts.
import { expect } from 'chai';
import pg from 'pg';
import type { AttemptRecord } from '../../src/store/delivery-contract.ts';
import { decodeDeliveryId } from '../../src/store/delivery-views.ts';
import { listingLocks } from '../../src/store/postgres/delivered-pairs.ts';
import { openPostgresStore, type PgStore } from '../../src/store/postgres/pg-store.ts';
import { countStatements, handOff } from '../helpers/handed-off.ts';
import { createTestDatabase, requirePostgres, type TestDatabase } from '../helpers/postgres.ts';

const T0 = 1_800_000_000_000;
const DEST = 'dst_0000000000000001';
const http = (outcome: 'success' | 'retryable', statusCode: number) => ({ statusCode, latencyMs: 5, responseBody: null, errorClass: null, outcome });

describe('store (PostgreSQL): delivered without a row, in its SQL', function () {
  this.timeout(20_000);
  let db: TestDatabase | undefined;
  let store: PgStore;
  let raw: pg.Client;

  before(async function () {
    await requirePostgres(this);
    db = await createTestDatabase();
  });
  after(async () => db?.drop());
  beforeEach(async () => {
    await db!.reset();
    store = await openPostgresStore({ url: db!.url });
    raw = new pg.Client({ connectionString: db!.url });
    await raw.connect();
    await store.accounts.create({ scriptId: 'ACCT0001', name: 'a', tier: 'FLEX', addon: true, host: null, country: null, taxRate: null }, 'h', 'p');
    await store.destinations.add({ id: DEST, scriptId: 'ACCT0001', type: 'webhook', name: 'w', enabled: true, settings: {} });
  });
  afterEach(async () => {
    await raw.end();
    await store.close();
  });

  const handedOff = (n: number, claim: string) => handOff(store, n, claim, { scriptId: 'ACCT0001', destinationId: DEST, at: T0 });

  const count = async (sql: string): Promise<number> => Number((await raw.query<{ n: string }>(sql)).rows[0].n);

  it('one statement for a batch whose deliveries get rows, updates and listings; the attempt lists what it delivered without a row', async () => {
    const [inFlight, listedA, retried, second, listedB] = await handedOff(5, 'fan#1');
    // One stored while in its lane (leased to the claim), as lane-in-flight.ts does.
    const [storedId] = await store.deliveries.storeHandoffs([inFlight], T0 + 1, { claimId: 'fan#1', leaseUntil: T0 + 60_000 });
    const batch: AttemptRecord = {
      claimId: 'fan#1', destinationId: DEST, at: T0 + 2, http: http('success', 200), message: 'ok', pauseAfterMs: 0, updates: [
        { id: -1, status: 'delivered', attempts: 1, nextAttemptAt: null, row: inFlight },
        { id: -2, status: 'delivered', attempts: 1, nextAttemptAt: null, row: listedA },
        // Refused within a batch the platform accepted: a retry, its row with its item.
        { id: -3, status: 'pending', attempts: 1, nextAttemptAt: T0 + 100, row: retried, message: 'refused' },
        // Delivered, but not by a first attempt: a row.
        { id: -4, status: 'delivered', attempts: 2, nextAttemptAt: null, row: second },
        { id: -5, status: 'delivered', attempts: 1, nextAttemptAt: null, row: listedB },
      ],
    };
    let results: Awaited<ReturnType<typeof store.deliveries.recordAttempts>> = [];
    expect(await countStatements(store, async () => (results = await store.deliveries.recordAttempts([batch]))), 'BEGIN, the batch, COMMIT').to.equal(3);
    expect(results[0].applied).to.deep.equal([-1, -2, -3, -4, -5]);
    const { rows: [a] } = await raw.query('SELECT id, script_id, delivered, first_seq, last_seq, events FROM delivery_attempts');
    expect(JSON.parse(a.delivered), 'in its updates\' order').to.deep.equal([[listedA.eventSeq, 0], [listedB.eventSeq, 0]]);
    expect([a.script_id, Number(a.first_seq), Number(a.last_seq), a.events]).to.deep.equal(['ACCT0001', listedA.eventSeq, listedB.eventSeq, 5]);
    const { rows } = await raw.query('SELECT id, event_seq, status, attempt_id FROM deliveries ORDER BY event_seq');
    expect(rows.map((r) => [Number(r.event_seq), r.status, Number(r.attempt_id)])).to.deep.equal([
      [inFlight.eventSeq, 'delivered', Number(a.id)], [retried.eventSeq, 'pending', Number(a.id)], [second.eventSeq, 'delivered', Number(a.id)]]);
    expect(Number(rows[0].id), 'the row stored in flight, updated').to.equal(storedId);
    expect(await count('SELECT count(*) AS n FROM delivery_items'), 'the retry\'s item only').to.equal(1);
    const list = await store.deliveries.list({ destinationId: DEST, status: 'delivered' });
    expect(list.map((d) => decodeDeliveryId(d.id)), 'the two listed ones first, newest first, then the rows').to.deep.equal([
      { attemptId: Number(a.id), index: 1 }, { attemptId: Number(a.id), index: 0 }, null, null]);
    expect(list.map((d) => d.eventId)).to.deep.equal(['L-4', 'L-1', 'L-3', 'L-0']);
  });

  it('a record without a request, or one that failed, lists nothing', async () => {
    const [x, y] = await handedOff(2, 'fan#1');
    await store.deliveries.recordAttempts([
      { claimId: 'fan#1', destinationId: DEST, at: T0 + 2, http: null, message: 'no request', pauseAfterMs: 0,
        updates: [{ id: -1, status: 'dead', attempts: 1, nextAttemptAt: null, row: x }] },
      { claimId: 'fan#1', destinationId: DEST, at: T0 + 3, http: http('retryable', 503), message: 'down', pauseAfterMs: 0,
        updates: [{ id: -2, status: 'pending', attempts: 1, nextAttemptAt: T0 + 9, row: y }] },
    ]);
    expect(await count('SELECT count(*) AS n FROM delivery_attempts WHERE delivered IS NOT NULL')).to.equal(0);
    expect(await count('SELECT count(*) AS n FROM deliveries')).to.equal(2);
  });

  it('fanned out again before the event left the queue: stored holds the listed pairs (one replayed since: by its row, its pair null)', async () => {
    const rows = await handedOff(3, 'fan#1');
    await store.deliveries.recordAttempts([{ claimId: 'fan#1', destinationId: DEST, at: T0 + 2, http: http('success', 200), message: 'ok', pauseAfterMs: 0,
      updates: rows.map((row, i) => ({ id: -(i + 1), status: 'delivered' as const, attempts: 1, nextAttemptAt: null, row })) }]);
    const [first] = await store.deliveries.list({ eventId: 'L-0' });
    expect(await store.deliveries.replay({ statuses: ['delivered'], deliveryId: first.id }, T0 + 3)).to.equal(1);
    // The process died before finishEvents: its leases handed back, the events claimed again.
    await store.deliveries.releaseOwner('fan', T0 + 4);
    const again = await store.deliveries.claimEvents('fan#2', T0 + 5, 60_000, 100);
    expect(again.map((e) => [e.event.eventId, [...(e.stored ?? [])]])).to.deep.equal([
      ['L-0', [`${DEST}#0`]], ['L-1', [`${DEST}#0`]], ['L-2', [`${DEST}#0`]]]);
    expect(await count('SELECT count(*) AS n FROM deliveries'), 'L-0: its replayed row').to.equal(1);
    expect(JSON.parse((await raw.query('SELECT delivered FROM delivery_attempts')).rows[0].delivered)).to.deep.equal([null, [rows[1].eventSeq, 0], [rows[2].eventSeq, 0]]);
  });

  it('sent by two processes (the lease moved): the later record is fenced, not listed twice; a lapsed lease nobody took is still listed', async () => {
    const [row, lapsed] = await handedOff(2, 'a#fan');
    const delivered = (claimId: string, at: number, r: typeof row, id: number): AttemptRecord => ({ claimId, destinationId: DEST, at, http: http('success', 200),
      message: 'ok', pauseAfterMs: 0, updates: [{ id, status: 'delivered', attempts: 1, nextAttemptAt: null, row: r }] });
    // A's lease ends before its record commits; B fans the first event out again, sends it, records it and finishes it.
    await store.deliveries.releaseOwner('a', T0 + 1);
    const [again] = await store.deliveries.claimEvents('b#fan', T0 + 2, 60_000, 1);
    await store.deliveries.completeFanOut('b#fan', T0 + 2, [{ seq: again.seq, scriptId: 'ACCT0001', eventId: 'L-0', receivedAt: T0,
      deliveries: [{ destinationId: DEST, destinationType: 'webhook', status: 'pending', item: row.item, part: 0, handoff: true }] }]);
    const [b] = await store.deliveries.recordAttempts([delivered('b#1', T0 + 3, row, -7)]);
    expect(b.applied).to.deep.equal([-7]);
    expect(await store.deliveries.finishEvents('b#fan', [again.seq])).to.equal(1);
    // A's records come at last: the first event's delivery is B's; the second's, which nobody took, is A's.
    const [a, other] = await store.deliveries.recordAttempts([delivered('a#1', T0 + 4, row, -1), delivered('a#1', T0 + 5, lapsed, -2)]);
    expect([a.applied, other.applied]).to.deep.equal([[], [-2]]);
    expect((await store.deliveries.list({})).map((d) => [d.eventId, d.createdAt - T0])).to.deep.equal([['L-1', 5], ['L-0', 3]]);
    expect(await count('SELECT count(*) AS n FROM deliveries')).to.equal(0);
  });

  it('stored in flight while its record commits: whichever commits first, one row or one listing, never both', async () => {
    const [first, second] = await handedOff(2, 'fan#1');
    const delivered = (at: number, row: typeof first, id: number): AttemptRecord => ({ claimId: 'fan#1', destinationId: DEST, at, http: http('success', 200),
      message: 'ok', pauseAfterMs: 0, updates: [{ id, status: 'delivered', attempts: 1, nextAttemptAt: null, row }] });
    const lease = { claimId: 'fan#1', leaseUntil: T0 + 60_000 };
    // The record first: listed, and the store that comes after stores nothing.
    expect((await store.deliveries.recordAttempts([delivered(T0 + 1, first, -1)]))[0].applied).to.deep.equal([-1]);
    expect(await store.deliveries.storeHandoffs([first], T0 + 2, lease), 'listed already').to.deep.equal([null]);
    // A store in progress (its transaction open, the row inserted, uncommitted): the record waits for it, then updates that row.
    const other = new pg.Client({ connectionString: db!.url });
    await other.connect();
    try {
      await other.query(`BEGIN; ${listingLocks([DEST], 'exclusive')}`);
      await other.query(`INSERT INTO deliveries (event_seq, script_id, destination_id, destination_type, event_id, part, received_at, status, attempts,
        next_attempt_at, created_at, updated_at, lease_owner, lease_until) VALUES ($1, 'ACCT0001', $2, 'webhook', 'L-1', 0, $3, 'pending', 0, $4, $3, $3, 'fan#1', $4)`,
      [second.eventSeq, DEST, T0, T0 + 60_000]);
      const recorded = store.deliveries.recordAttempts([delivered(T0 + 3, second, -2)]);
      const waiting = async () => count("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted");
      for (let n = 0; n < 500 && (await waiting()) === 0; n++) await new Promise((r) => setImmediate(r));
      expect(await waiting(), 'the record waits for the store').to.equal(1);
      await other.query('COMMIT');
      expect((await recorded)[0].applied).to.deep.equal([-2]);
    } finally {
      await other.end();
    }
    const rows = (await raw.query('SELECT event_seq, status FROM deliveries')).rows;
    expect(rows.map((r) => [Number(r.event_seq), r.status]), 'the row stored in flight, delivered').to.deep.equal([[second.eventSeq, 'delivered']]);
    const { rows: attempts } = await raw.query('SELECT delivered FROM delivery_attempts ORDER BY id');
    expect(attempts.map((a) => a.delivered)).to.deep.equal([JSON.stringify([[first.eventSeq, 0]]).replace(',', ', '), null]);
  });

  it('upgrade to version 13: delivered rows stored before keep showing, next to the derived ones', async () => {
    const [before, after] = await handedOff(2, 'fan#1');
    await store.close();
    // Version 12 as an older release left it: no columns, no indexes, a delivered row.
    await raw.query(`DROP INDEX delivery_attempts_delivered_range; DROP INDEX delivery_attempts_delivered_account;
      ALTER TABLE delivery_attempts DROP COLUMN script_id, DROP COLUMN delivered, DROP COLUMN first_seq, DROP COLUMN last_seq;
      DELETE FROM schema_migrations WHERE version >= 13;
      INSERT INTO delivery_attempts (destination_id, attempted_at, status_code, latency_ms, outcome, events) VALUES ('${DEST}', ${T0 + 1}, 200, 1, 'success', 1);
      INSERT INTO deliveries (event_seq, script_id, destination_id, destination_type, event_id, part, status, attempts, received_at, created_at, updated_at,
        delivered_at, attempt_id) VALUES (${before.eventSeq}, 'ACCT0001', '${DEST}', 'webhook', 'L-0', 0, 'delivered', 1, ${T0}, ${T0 + 1}, ${T0 + 1}, ${T0 + 1},
        currval('delivery_attempts_id_seq'));`);
    store = await openPostgresStore({ url: db!.url });
    await store.deliveries.recordAttempts([{ claimId: 'fan#1', destinationId: DEST, at: T0 + 2, http: http('success', 200), message: 'ok', pauseAfterMs: 0,
      updates: [{ id: -2, status: 'delivered', attempts: 1, nextAttemptAt: null, row: after }] }]);
    const list = await store.deliveries.list({ scriptId: 'ACCT0001' });
    expect(list.map((d) => [d.eventId, d.status, decodeDeliveryId(d.id) === null])).to.deep.equal([['L-1', 'delivered', false], ['L-0', 'delivered', true]]);
    expect((await store.deliveries.attempts(list[1].id)).map((a) => a.attemptedAt), 'the row\'s attempt').to.deep.equal([T0 + 1]);
    expect((await store.deliveries.attempts(list[0].id)).map((a) => a.attemptedAt), 'the listing attempt').to.deep.equal([T0 + 2]);
    const [stats] = await store.deliveries.stats('ACCT0001');
    expect(stats.counts.delivered).to.equal(2);
  });
});
