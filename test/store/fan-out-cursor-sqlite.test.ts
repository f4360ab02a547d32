// SQLite's fan-out cursor (migration 22, src/store/sqlite/fan-out-cursor.ts), through the
// store API on a real file: intake writes no dispatch_queue row, the fan-out reads accepted
// events after the cursor, the cursor moves only past settled events, a second store (another
// process) takes a lapsed cursor over with what its holder was mapping counted as interrupted
// (twice: poison, as before), what it had mapped coming back with its stored rows and listed
// pairs, and the counts, purge and a store migrated from 21 with queued events.
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { openConnection } from '../../src/store/sqlite/connection.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { partKey, type DispatchEvent, type FanOutResult, type NewDelivery, type UnstoredRow } from '../../src/store/delivery-contract.ts';
import type { StoredItem } from '../../src/delivery/types.ts';
import type { Store } from '../../src/store/types.ts';
import { tempDir } from '../helpers/test-server.ts';

const T0 = 1_800_000_000_000;
const LEASE = 60_000;
const ACCOUNT = 'ACCT0001';
const DEST = 'dst_0000000000000001';
const item = (eventId: string): StoredItem => ({ native: { rule: 'r', fields: {} } as never, eventId, identifiers: {}, attribution: {}, receivedAt: T0 });

describe('store: SQLite fan-out cursor', () => {
  let dir: string;
  let file: string;
  let store: Store;
  let others: Store[];
  let raw: Database.Database;

  beforeEach(async () => {
    dir = tempDir('tl-cursor-');
    file = join(dir, 'tracklane.db');
    store = openSqliteStore({ file });
    others = [];
    await store.accounts.create({ scriptId: ACCOUNT, name: 'a', tier: 'FLEX', addon: true, host: null, country: null, taxRate: null }, 'h', 'p');
    await store.destinations.add({ id: DEST, scriptId: ACCOUNT, type: 'webhook', name: 'hook', enabled: true, settings: {} });
    raw = new Database(file, { readonly: true });
  });
  afterEach(async () => {
    raw.close();
    for (const s of [store, ...others]) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Another store object on the same file: another process. */
  const second = (): Store => {
    const s = openSqliteStore({ file, writerThread: false });
    others.push(s);
    return s;
  };
  const append = (ids: string[], status: 'accepted' | 'rejected' = 'accepted', at = T0) => store.events.append(ids.map((id) => ({
    id, scriptId: ACCOUNT, name: 'lead_created', eventId: id, status, source: 'event', requestId: 'r',
    receivedAt: at, errors: [], warnings: [], payload: { event: { name: 'lead_created', id } },
  })));
  const cursorRow = () => raw.prepare('SELECT cursor_seq, mapped_to, claimed_to, lease_owner FROM fanout_cursors').get() as
    { cursor_seq: number; mapped_to: number; claimed_to: number; lease_owner: string | null };
  const queueRows = () => raw.prepare(`SELECT e.event_id AS id, q.map_claims, q.held_for FROM dispatch_queue q JOIN events e ON e.seq = q.event_seq
    ORDER BY q.event_seq`).all() as { id: string; map_claims: number; held_for: string | null }[];
  const seqOf = (eventId: string) => (raw.prepare('SELECT seq FROM events WHERE event_id = ?').get(eventId) as { seq: number }).seq;
  const brief = (events: DispatchEvent[]) => events.map((e) => [e.event.eventId, e.interrupted ?? 0]);
  const pending = (eventId: string, part = 0, handoff = false): NewDelivery =>
    ({ destinationId: DEST, destinationType: 'webhook', status: 'pending', part, item: item(eventId), ...(handoff ? { handoff: true } : {}) });
  /** Completes `claimId` for `events`, each with the deliveries `rows` gives it. */
  const complete = (s: Store, claimId: string, events: DispatchEvent[], rows: (e: DispatchEvent) => NewDelivery[], at = T0) =>
    s.deliveries.completeFanOut(claimId, at, events.map((e): FanOutResult => ({
      seq: e.seq, scriptId: ACCOUNT, eventId: e.event.eventId, receivedAt: T0, deliveries: rows(e),
    })));
  const unstored = (e: DispatchEvent, part = 0): UnstoredRow => ({
    eventSeq: e.seq, scriptId: ACCOUNT, destinationId: DEST, destinationType: 'webhook', eventId: e.event.eventId, receivedAt: T0, part, item: item(e.event.eventId!),
  });

  it('intake writes no dispatch_queue row; the claim reads the accepted event after the cursor, with its record, and passes rejected ones', async () => {
    await append(['A']);
    await append(['R'], 'rejected');
    await append(['B']);
    expect(raw.prepare('SELECT count(*) AS n FROM dispatch_queue').get()).to.deep.equal({ n: 0 });
    expect(cursorRow()).to.deep.equal({ cursor_seq: 0, mapped_to: 0, claimed_to: 0, lease_owner: null });
    expect(await store.deliveries.dispatchBacklog()).to.equal(2);
    const claimed = await store.deliveries.claimEvents('p/1/a#fan-out.0', T0, LEASE, 10);
    expect(claimed.map((e) => [e.seq, e.event.id, e.event.status, e.event.payload])).to.deep.equal([
      [seqOf('A'), 'A', 'accepted', { event: { name: 'lead_created', id: 'A' } }],
      [seqOf('B'), 'B', 'accepted', { event: { name: 'lead_created', id: 'B' } }],
    ]);
    expect(claimed.every((e) => e.stored === undefined && e.interrupted === undefined && e.heldFor === undefined)).to.equal(true);
    expect(cursorRow(), 'claimed, leased to the claim').to.deep.equal({ cursor_seq: 0, mapped_to: 0, claimed_to: seqOf('B'), lease_owner: 'p/1/a#fan-out.0' });
    expect((await complete(store, 'p/1/a#fan-out.0', claimed, () => [])).events).to.equal(2);
    expect(cursorRow(), 'all settled: past them, the lease handed back').to.deep.equal({ cursor_seq: seqOf('B'), mapped_to: seqOf('B'), claimed_to: seqOf('B'), lease_owner: null });
    expect(await store.deliveries.dispatchBacklog()).to.equal(0);
    expect(await store.deliveries.leaseHolders()).to.deep.equal([]);
    expect(await store.deliveries.claimEvents('p/1/a#fan-out.1', T0, LEASE, 10), 'nothing left').to.deep.equal([]);
    expect(raw.prepare('SELECT count(*) AS n FROM dispatch_queue').get(), 'and still no queue row').to.deep.equal({ n: 0 });
  });

  it('the cursor moves only past contiguous settled events: one waiting for its handoffs holds it back until finishEvents', async () => {
    await append(['A', 'B', 'C']);
    const claimed = await store.deliveries.claimEvents('p/1/a#fan-out.0', T0, LEASE, 10);
    const commit = await complete(store, 'p/1/a#fan-out.0', claimed, (e) => [pending(e.event.eventId!, 0, e.event.eventId === 'B')]);
    expect(commit.handedOff).to.deep.equal([seqOf('B')]);
    expect(cursorRow(), 'A settled, B open, C settled behind it').to.deep.equal({ cursor_seq: seqOf('A'), mapped_to: seqOf('C'), claimed_to: seqOf('C'), lease_owner: 'p/1/a#fan-out.0' });
    expect(await store.deliveries.dispatchBacklog(), 'B and C are after the cursor').to.equal(2);
    await append(['D']);
    const next = await store.deliveries.claimEvents('p/1/a#fan-out.1', T0 + 10, LEASE, 10);
    expect(brief(next), 'B is not taken again while its lease runs').to.deep.equal([['D', 0]]);
    await complete(store, 'p/1/a#fan-out.1', next, () => [], T0 + 10);
    expect(cursorRow().cursor_seq, 'still before B').to.equal(seqOf('A'));
    expect(await store.deliveries.finishEvents('other/1/x#fan-out.0', [seqOf('B')]), 'another claim: fenced').to.equal(0);
    expect(await store.deliveries.finishEvents('p/1/a#fan-out.1', [seqOf('B')]), 'not the claim that mapped it: fenced').to.equal(0);
    // Its handed-off delivery got its row (the attempt record), then the settler finishes it.
    await store.deliveries.storeHandoffs([unstored(claimed[1])], T0 + 20);
    expect(await store.deliveries.finishEvents('p/1/a#fan-out.0', [seqOf('B')])).to.equal(1);
    expect(cursorRow(), 'past all of them, the lease handed back').to.deep.equal({ cursor_seq: seqOf('D'), mapped_to: seqOf('D'), claimed_to: seqOf('D'), lease_owner: null });
    expect(await store.deliveries.dispatchBacklog()).to.equal(0);
    expect(raw.prepare('SELECT count(*) AS n FROM dispatch_queue').get()).to.deep.equal({ n: 0 });
  });

  it('a second store takes a lapsed cursor over: the events being mapped come back alone, interrupted; twice interrupted is poison', async () => {
    await append(['A', 'B', 'C']);
    const [a] = await store.deliveries.claimEvents('dead/1/a#fan-out.0', T0, LEASE, 1);
    await complete(store, 'dead/1/a#fan-out.0', [a], (e) => [pending(e.event.eventId!, 0, true)]); // A mapped, waiting for its handoff
    const mapping = await store.deliveries.claimEvents('dead/1/a#fan-out.1', T0, LEASE, 10);
    expect(brief(mapping), 'then B and C were being mapped when it died').to.deep.equal([['B', 0], ['C', 0]]);

    const b = second();
    expect(await b.deliveries.claimEvents('live/1/b#fan-out.0', T0 + LEASE - 1, LEASE, 10), 'leased to the first still').to.deep.equal([]);
    const first = await b.deliveries.claimEvents('live/1/b#fan-out.0', T0 + LEASE, LEASE, 10);
    expect(brief(first), 'A, mapped before, is fanned out again; B, a suspect, stops the claim').to.deep.equal([['A', 0]]);
    expect(queueRows(), 'what the holder was mapping, queued with one interruption; A with none').to.deep.equal([
      { id: 'A', map_claims: 1, held_for: null }, { id: 'B', map_claims: 1, held_for: null }, { id: 'C', map_claims: 1, held_for: null },
    ]);
    expect(cursorRow(), 'the cursor went past what it took over').to.deep.equal({ cursor_seq: seqOf('C'), mapped_to: seqOf('C'), claimed_to: seqOf('C'), lease_owner: null });
    // The first store's late commits are fenced: the events are the new holder's.
    expect((await complete(store, 'dead/1/a#fan-out.1', mapping, () => [])).events).to.equal(0);
    expect(await store.deliveries.finishEvents('dead/1/a#fan-out.0', [a.seq]), 'A is not finished by the old holder').to.equal(0);
    await complete(b, 'live/1/b#fan-out.0', first, () => []);
    const suspect = await b.deliveries.claimEvents('live/1/b#fan-out.1', T0 + LEASE, LEASE, 10);
    expect(brief(suspect), 'claimed alone').to.deep.equal([['B', 1]]);
    // The second dies mapping B: a third finds it interrupted twice.
    await b.deliveries.releaseOwner('live/1/b', T0 + LEASE);
    const third = await second().deliveries.claimEvents('next/1/c#fan-out.0', T0 + LEASE, LEASE, 10);
    expect(brief(third), 'poison (src/delivery/poison.ts)').to.deep.equal([['B', 2]]);
  });

  it('events mapped but not settled come back to a new holder with their stored rows and the pairs attempts listed', async () => {
    await append(['A', 'B']);
    const claimed = await store.deliveries.claimEvents('dead/1/a#fan-out.0', T0, LEASE, 10);
    // Each: part 0 stored pending, part 1 handed off; A's handoff delivered by its first attempt (listed, no row).
    await complete(store, 'dead/1/a#fan-out.0', claimed, (e) => [pending(e.event.eventId!, 0), pending(e.event.eventId!, 1, true)]);
    await store.deliveries.recordAttempts([{
      claimId: 'dead/1/a#1', destinationId: DEST, at: T0 + 5, message: 'ok', pauseAfterMs: 0,
      http: { statusCode: 200, latencyMs: 3, responseBody: '', errorClass: null, outcome: 'success' },
      updates: [{ id: -1, status: 'delivered', attempts: 1, nextAttemptAt: null, row: unstored(claimed[0], 1) }],
    }]);
    expect(raw.prepare('SELECT count(*) AS n FROM deliveries WHERE part = 1').get(), 'no row for the delivered handoff').to.deep.equal({ n: 0 });
    const again = await second().deliveries.claimEvents('live/1/b#fan-out.0', T0 + LEASE, LEASE, 10);
    expect(again.map((e) => [e.event.eventId, e.interrupted ?? 0, [...(e.stored ?? [])].sort()])).to.deep.equal([
      ['A', 0, [partKey(DEST, 0), partKey(DEST, 1)]],
      ['B', 0, [partKey(DEST, 0)]],
    ]);
  });

  it('releaseOwner hands the cursor back with what its owner was mapping queued; a retake by the same claim takes its events again', async () => {
    await append(['A', 'B']);
    const claimed = await store.deliveries.claimEvents('p/1/a#fan-out.0', T0, LEASE, 10);
    expect(await store.deliveries.leaseHolders()).to.deep.equal(['p/1/a#fan-out.0']);
    const retaken = await store.deliveries.claimEvents('p/1/a#fan-out.0', T0 + 5, LEASE, 10);
    expect(brief(retaken), 'its completion failed: the same events, no interruption').to.deep.equal([['A', 0], ['B', 0]]);
    expect(cursorRow().claimed_to).to.equal(seqOf('B'));
    expect(await store.deliveries.releaseOwner('p/1/ab', T0 + 5), 'another owner').to.equal(0);
    expect(await store.deliveries.releaseOwner('p/1/a', T0 + 5)).to.equal(1);
    expect(await store.deliveries.leaseHolders()).to.deep.equal([]);
    expect(queueRows().map((r) => [r.id, r.map_claims])).to.deep.equal([['A', 1], ['B', 1]]);
    expect((await complete(store, 'p/1/a#fan-out.0', claimed, () => [])).events, 'released: its late commit is fenced').to.equal(0);
    await append(['C']);
    const next = await store.deliveries.claimEvents('p/1/a#fan-out.1', T0 + 10, LEASE, 10);
    expect(brief(next)).to.deep.equal([['A', 1]]);
    await complete(store, 'p/1/a#fan-out.1', next, () => [], T0 + 10);
    expect(brief(await store.deliveries.claimEvents('p/1/a#fan-out.2', T0 + 10, LEASE, 10))).to.deep.equal([['B', 1]]);
  });

  it('an event mapped with handoffs and still waiting when its lease ends is fanned out again by its own process', async () => {
    await append(['A']);
    const [a] = await store.deliveries.claimEvents('p/1/a#fan-out.0', T0, LEASE, 10);
    await complete(store, 'p/1/a#fan-out.0', [a], (e) => [pending(e.event.eventId!, 0, true)]);
    expect(await store.deliveries.claimEvents('p/1/a#fan-out.1', T0 + LEASE - 1, LEASE, 10)).to.deep.equal([]);
    const again = await store.deliveries.claimEvents('p/1/a#fan-out.1', T0 + LEASE, LEASE, 10);
    expect(brief(again)).to.deep.equal([['A', 0]]);
    expect(await store.deliveries.finishEvents('p/1/a#fan-out.0', [a.seq]), 'the first claim no longer holds it').to.equal(0);
    await complete(store, 'p/1/a#fan-out.1', again, () => [pending('A')], T0 + LEASE);
    expect(cursorRow()).to.deep.equal({ cursor_seq: a.seq, mapped_to: a.seq, claimed_to: a.seq, lease_owner: null });
  });

  it('a held event moves to the queue, leased to the hold; the cursor goes on past it', async () => {
    await append(['A', 'B']);
    const claimed = await store.deliveries.claimEvents('p/1/a#fan-out.0', T0, LEASE, 10);
    const results: FanOutResult[] = claimed.map((e) => ({ seq: e.seq, scriptId: ACCOUNT, eventId: e.event.eventId, receivedAt: T0, deliveries: [],
      ...(e.event.eventId === 'A' ? { held: { destinationIds: [DEST], claimId: 'p/1/a#held#0', leaseUntil: T0 + 1_000 } } : {}) }));
    expect((await store.deliveries.completeFanOut('p/1/a#fan-out.0', T0, results)).events).to.equal(2);
    expect(queueRows()).to.deep.equal([{ id: 'A', map_claims: 0, held_for: JSON.stringify([DEST]) }]);
    expect(cursorRow().cursor_seq).to.equal(seqOf('B'));
    expect(await store.deliveries.dispatchBacklog(), 'the held one').to.equal(1);
    expect(await store.deliveries.claimEvents('p/1/a#fan-out.1', T0 + 10, LEASE, 10), 'not while held').to.deep.equal([]);
    expect(await store.deliveries.releaseOwner('p/1/a#held', T0 + 10)).to.equal(1);
    const back = await store.deliveries.claimEvents('p/1/a#fan-out.1', T0 + 10, LEASE, 10);
    expect(back.map((e) => [e.event.eventId, e.heldFor])).to.deep.equal([['A', [DEST]]]);
  });

  it('dispatchBacklog and queueSnapshot count the accepted events after the cursor; purge never removes them, nor the newest event', async () => {
    await append(['R'], 'rejected', T0);
    await append(['A', 'B'], 'accepted', T0);
    const claimed = await store.deliveries.claimEvents('p/1/a#fan-out.0', T0, LEASE, 1);
    await complete(store, 'p/1/a#fan-out.0', claimed, () => []);
    expect(await store.deliveries.dispatchBacklog()).to.equal(1);
    expect((await store.deliveries.queueSnapshot()).dispatchBacklog).to.equal(1);
    expect((await store.deliveries.purge(T0 + 1)).events, 'R and A: B is after the cursor').to.equal(2);
    expect((await store.events.list({ limit: 10 })).map((e) => e.id)).to.deep.equal(['B']);
    const [b] = await store.deliveries.claimEvents('p/1/a#fan-out.1', T0, LEASE, 10);
    await complete(store, 'p/1/a#fan-out.1', [b], () => []);
    expect(cursorRow().cursor_seq).to.equal(b.seq);
    expect((await store.deliveries.purge(T0 + 1)).events, 'B, the newest, stays').to.equal(0);
    // So a new event gets a seq after every one the cursor passed, and is fanned out.
    await append(['N'], 'accepted', T0 + 2);
    expect(seqOf('N')).to.be.above(b.seq);
    expect(brief(await store.deliveries.claimEvents('p/1/a#fan-out.2', T0 + 2, LEASE, 10))).to.deep.equal([['N', 0]]);
  });

  it('a store migrated from 21 with events in dispatch_queue keeps every one of them due; new events come from the cursor', async () => {
    const old = join(dir, 'v21.db');
    const db = openConnection(old);
    for (let i = 0; i < 21; i++) db.exec(MIGRATIONS[i]);
    db.pragma('user_version = 21');
    db.exec(`INSERT INTO accounts (script_id, name, tier, addon, enabled, created_at, updated_at) VALUES ('${ACCOUNT}', 'a', 'FLEX', 1, 1, ${T0}, ${T0})`);
    const insert = db.prepare(`INSERT INTO events (id, script_id, name, event_id, status, source, request_id, received_at, errors, warnings, payload)
      VALUES (?, '${ACCOUNT}', 'lead_created', ?, ?, 'event', 'r', ${T0}, '[]', '[]', '{}')`);
    for (const [id, status] of [['Q1', 'accepted'], ['D', 'accepted'], ['Q2', 'accepted'], ['X', 'rejected'], ['Q3', 'accepted']]) insert.run(id, id, status);
    // Q1 queued, Q2 leased to a process long gone, Q3 held for a destination; D was fanned out.
    db.exec(`INSERT INTO dispatch_queue (event_seq, lease_owner, lease_until, held_for, map_claims) VALUES
      (1, NULL, NULL, NULL, 0), (3, 'gone/1/x#fan-out.0', ${T0 - 1}, NULL, 1), (5, NULL, NULL, '["${DEST}"]', 0)`);
    db.close();
    const upgraded = openSqliteStore({ file: old, writerThread: false });
    others.push(upgraded);
    const check = new Database(old, { readonly: true });
    try {
      expect(check.prepare('SELECT cursor_seq, mapped_to, claimed_to, lease_owner FROM fanout_cursors').all(), 'behind every existing event')
        .to.deep.equal([{ cursor_seq: 5, mapped_to: 5, claimed_to: 5, lease_owner: null }]);
      expect(check.prepare('SELECT count(*) AS n FROM dispatch_queue').get()).to.deep.equal({ n: 3 });
    } finally {
      check.close();
    }
    expect(await upgraded.deliveries.dispatchBacklog()).to.equal(3);
    await upgraded.events.append([{ id: 'N', scriptId: ACCOUNT, name: 'lead_created', eventId: 'N', status: 'accepted', source: 'event', requestId: 'r',
      receivedAt: T0, errors: [], warnings: [], payload: {} }]);
    expect(await upgraded.deliveries.dispatchBacklog()).to.equal(4);
    const claimed = await upgraded.deliveries.claimEvents('p/1/a#fan-out.0', T0, LEASE, 10);
    expect(claimed.map((e) => [e.event.eventId, e.interrupted ?? 0, e.heldFor ?? null]), 'Q2, interrupted once, stops the claim')
      .to.deep.equal([['Q1', 0, null]]);
    await complete(upgraded, 'p/1/a#fan-out.0', claimed, () => []);
    const q2 = await upgraded.deliveries.claimEvents('p/1/a#fan-out.1', T0, LEASE, 10);
    expect(brief(q2)).to.deep.equal([['Q2', 1]]);
    await complete(upgraded, 'p/1/a#fan-out.1', q2, () => []);
    const rest = await upgraded.deliveries.claimEvents('p/1/a#fan-out.2', T0, LEASE, 10);
    expect(rest.map((e) => [e.event.eventId, e.heldFor ?? null])).to.deep.equal([['Q3', [DEST]], ['N', null]]);
    await complete(upgraded, 'p/1/a#fan-out.2', rest, () => []);
    expect(await upgraded.deliveries.dispatchBacklog()).to.equal(0);
  });
});
