// The delivery store on its own, SQLite and PostgreSQL alike: claims never overlap, expired leases come back,
// a stale claim cannot complete what a newer claim holds (fencing), replay's rules, the
// purges, and migration 5 on a database that already holds acknowledged events.
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import type { StoredItem } from '../../src/delivery/types.ts';
import { MIGRATIONS, migrate } from '../../src/store/sqlite/migrations.ts';
import { openConnection } from '../../src/store/sqlite/connection.ts';
import { FAN_OUT_ROWS_PER_COMMIT, sqliteDeliveryStore } from '../../src/store/sqlite/delivery-store.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/types.ts';
import { partKey, type DispatchEvent, type FanOutResult } from '../../src/store/delivery-contract.ts';
import { tempDir } from '../helpers/test-server.ts';
import { STORE_KINDS, STORE_LABEL, storeHarness } from '../helpers/stores.ts';

const T0 = 1_800_000_000_000;
const item = (eventId: string): StoredItem => ({ native: { rule: 'r', fields: {} } as never, eventId, identifiers: {}, attribution: {}, receivedAt: T0 });

for (const kind of STORE_KINDS) describe(`delivery: ${STORE_LABEL[kind]} delivery store`, () => {
  let store: Store;
  const DEST = 'dst_0000000000000001';
  const harness = storeHarness(kind);

  beforeEach(async () => {
    store = await harness.open();
    await store.accounts.create({ scriptId: 'ACCT0001', name: 'a', tier: 'FLEX', addon: true, host: null, country: null, taxRate: null }, 'h', 'p');
    await store.destinations.add({ id: DEST, scriptId: 'ACCT0001', type: 'ga4', name: 'ga4', enabled: true, settings: {} });
  });
  afterEach(() => harness.close());

  /** Stores `n` accepted lead_created events of the account, row ids `${prefix}-i`, event ids `${eventPrefix}-i`. */
  const appendAccepted = (n: number, prefix: string, eventPrefix: string, at = T0, payload: Record<string, unknown> = {}) =>
    store.events.append(Array.from({ length: n }, (_, i) => ({
      id: `${prefix}-${i}`, scriptId: 'ACCT0001', name: 'lead_created', eventId: `${eventPrefix}-${i}`, status: 'accepted' as const,
      source: 'event', requestId: 'r', receivedAt: at, errors: [], warnings: [], payload,
    })));

  /** Completes claim `fan#f` for `claimed`, each event with the deliveries `rows` gives it. */
  const fanOutClaimed = (claimed: readonly DispatchEvent[], rows: (e: DispatchEvent, i: number) => FanOutResult['deliveries']) =>
    store.deliveries.completeFanOut('fan#f', T0, claimed.map((e, i) => ({
      seq: e.seq, scriptId: 'ACCT0001', eventId: e.event.eventId, receivedAt: T0, deliveries: rows(e, i),
    })));

  /** Stores `n` accepted events and fans each out to one pending delivery. */
  async function seed(n: number, at = T0): Promise<void> {
    await appendAccepted(n, `ev-${at}`, `L-${at}`, at, { event: { name: 'lead_created' } });
    const claimed = await store.deliveries.claimEvents('seed#f', at, 1_000, 10_000);
    await store.deliveries.completeFanOut('seed#f', at, claimed.map((e) => ({
      seq: e.seq, scriptId: 'ACCT0001', eventId: e.event.eventId, receivedAt: at,
      deliveries: [{ destinationId: DEST, destinationType: 'ga4', status: 'pending' as const, part: 0, item: item(e.event.eventId!) }],
    })));
  }

  const finish = (claimId: string, ids: number[], status: 'delivered' | 'dead' | 'failed', at = T0) =>
    store.deliveries.recordAttempts([{
      claimId, destinationId: DEST, at, message: status, pauseAfterMs: 0,
      http: { statusCode: status === 'delivered' ? 200 : 500, latencyMs: 3, responseBody: 'x'.repeat(30_000), errorClass: null, outcome: status === 'delivered' ? 'success' : 'retryable' },
      updates: ids.map((id) => ({ id, status, attempts: 1, nextAttemptAt: null })),
    }]);

  it('accepted events are queued for fan-out in the intake transaction; fan-out under a lost lease inserts nothing', async () => {
    await store.events.append([
      { id: 'a', scriptId: 'ACCT0001', name: 'lead_created', eventId: 'L1', status: 'accepted', source: 'event', requestId: 'r', receivedAt: T0, errors: [], warnings: [], payload: {} },
      { id: 'b', scriptId: 'ACCT0001', name: 'lead_created', eventId: 'L2', status: 'rejected', source: 'event', requestId: 'r', receivedAt: T0, errors: [], warnings: [], payload: {} },
    ]);
    expect(await store.deliveries.dispatchBacklog()).to.equal(1);
    const [ev] = await store.deliveries.claimEvents('old#f', T0, 1_000, 10);
    expect(await store.deliveries.claimEvents('new#f', T0 + 500, 1_000, 10), 'leased').to.have.length(0);
    expect(await store.deliveries.claimEvents('old#f', T0 + 100, 1_000, 10), 'its own earlier lease (a failed completion) is taken again').to.have.length(1);
    expect(await store.deliveries.claimEvents('new#f', T0 + 1_000, 1_000, 10), 'renewed').to.have.length(0);
    expect(await store.deliveries.claimEvents('new#f', T0 + 1_100, 1_000, 10), 'lease expired').to.have.length(1);
    const result = { seq: ev.seq, scriptId: 'ACCT0001', eventId: 'L1', receivedAt: T0, deliveries: [{ destinationId: DEST, destinationType: 'ga4', status: 'pending' as const, part: 0, item: item('L1') }] };
    expect((await store.deliveries.completeFanOut('old#f', T0, [result])).events, 'stale fan-out fenced').to.equal(0);
    expect((await store.deliveries.completeFanOut('new#f', T0, [result])).events).to.equal(1);
    expect(await store.deliveries.list({})).to.have.length(1);
    expect(await store.deliveries.dispatchBacklog()).to.equal(0);
  });

  /** A handed-off delivery's row, as the fan-out hands it to a lane. */
  const unstored = (seq: number, eventId: string, part = 0) => ({
    eventSeq: seq, scriptId: 'ACCT0001', destinationId: DEST, destinationType: 'ga4', eventId, receivedAt: T0, part, item: item(eventId),
  });

  it('fan-out stores no row for a handed-off delivery: its event stays queued and leased until finishEvents; its other rows are stored', async () => {
    await store.events.append(['a', 'b'].map((id) => ({
      id, scriptId: 'ACCT0001', name: 'lead_created', eventId: `L-${id}`, status: 'accepted' as const, source: 'event', requestId: 'r',
      receivedAt: T0, errors: [], warnings: [], payload: {},
    })));
    const claimed = await store.deliveries.claimEvents('fan#f', T0, 1_000, 10);
    const commit = await fanOutClaimed(claimed, (e, i) => [
      { destinationId: DEST, destinationType: 'ga4', status: 'skipped', part: 0, item: null, reason: 'consent' },
      { destinationId: DEST, destinationType: 'ga4', status: 'pending', part: 1, item: item(e.event.eventId!), ...(i === 0 ? { handoff: true } : {}) },
    ]);
    expect(commit.pendingByDestination.get(DEST), 'only the stored pending one wakes the lane').to.equal(1);
    expect(commit.handedOff).to.deep.equal([claimed[0].seq]);
    const rows = await store.deliveries.list({});
    expect(rows.map((d) => `${d.eventId}:${d.status}`).sort()).to.deep.equal(['L-a:skipped', 'L-b:pending', 'L-b:skipped']);
    // SQLite fans out from a cursor (fan-out-cursor.ts) that waits before the open event: the settled one after it counts until it passes.
    expect(await store.deliveries.dispatchBacklog(), 'the event with a handoff is still queued').to.equal(kind === 'sqlite' ? 2 : 1);
    expect(await store.deliveries.claimEvents('other#f', T0 + 500, 1_000, 10), 'and leased').to.have.length(0);
    expect(await store.deliveries.finishEvents('stale#f', [claimed[0].seq]), 'fenced on its lease').to.equal(0);
    expect(await store.deliveries.finishEvents('fan#f', [claimed[0].seq])).to.equal(1);
    expect(await store.deliveries.dispatchBacklog()).to.equal(0);
  });

  it('an event fanned out again (its lease ended before it finished) comes with the rows it already has, which are not stored twice', async () => {
    await appendAccepted(1, 'again', 'G');
    const [first] = await store.deliveries.claimEvents('fan#1', T0, 1_000, 10);
    expect(first.stored, 'a fresh event has none').to.equal(undefined);
    const rows = (e: DispatchEvent): FanOutResult['deliveries'] => [
      { destinationId: DEST, destinationType: 'ga4', status: 'pending', part: 0, item: item(e.event.eventId!), handoff: true },
      { destinationId: DEST, destinationType: 'ga4', status: 'pending', part: 1, item: item(e.event.eventId!) },
    ];
    await store.deliveries.completeFanOut('fan#1', T0, [{ seq: first.seq, scriptId: 'ACCT0001', eventId: 'G-0', receivedAt: T0, deliveries: rows(first) }]);
    const [again] = await store.deliveries.claimEvents('fan#2', T0 + 1_000, 1_000, 10);
    expect(again.seq).to.equal(first.seq);
    expect([...(again.stored ?? [])]).to.deep.equal([partKey(DEST, 1)]);
    const commit = await store.deliveries.completeFanOut('fan#2', T0 + 1_000, [{ seq: again.seq, scriptId: 'ACCT0001', eventId: 'G-0', receivedAt: T0,
      deliveries: rows(again).map((d) => ({ ...d, handoff: undefined })) }]);
    expect(commit.pendingByDestination.get(DEST), 'part 1 was there already').to.equal(1);
    expect((await store.deliveries.list({})).map((d) => d.eventId)).to.deep.equal(['G-0', 'G-0']);
    expect(await store.deliveries.dispatchBacklog()).to.equal(0);
  });

  it('a handed-off delivery\'s row is written once, by its attempt record, in the state the attempt left it; a second holder\'s record is not applied', async () => {
    await appendAccepted(3, 'rec', 'R');
    const claimed = await store.deliveries.claimEvents('fan#f', T0, 60_000, 10);
    const [ok, retry, dead] = claimed.map((e) => unstored(e.seq, e.event.eventId!));
    const http = { statusCode: 200, latencyMs: 3, responseBody: 'fine', errorClass: null, outcome: 'success' as const };
    const [rec] = await store.deliveries.recordAttempts([{
      claimId: 'lane#1', destinationId: DEST, at: T0 + 10, message: 'ok', pauseAfterMs: 0, http,
      updates: [{ id: -1, status: 'delivered', attempts: 1, nextAttemptAt: null, row: ok }],
    }, {
      claimId: 'lane#1', destinationId: DEST, at: T0 + 20, message: 'HTTP 503', pauseAfterMs: 0,
      http: { ...http, statusCode: 503, outcome: 'retryable' },
      updates: [{ id: -2, status: 'pending', attempts: 1, nextAttemptAt: T0 + 10_000, row: retry },
        { id: -3, status: 'failed', attempts: 1, nextAttemptAt: null, row: dead }],
    }]);
    expect(rec.applied).to.deep.equal([-1]);
    const byEvent = new Map((await store.deliveries.list({})).map((d) => [d.eventId, d]));
    expect(byEvent.get('R-0')).to.include({ status: 'delivered', attempts: 1, lastStatusCode: 200, lastError: null, deliveredAt: T0 + 10, item: null });
    expect(byEvent.get('R-1')).to.include({ status: 'pending', attempts: 1, nextAttemptAt: T0 + 10_000, lastStatusCode: 503, lastError: 'HTTP 503' });
    expect(byEvent.get('R-1')!.item?.eventId, 'a retry keeps its item').to.equal('R-1');
    expect(byEvent.get('R-2')).to.include({ status: 'failed', lastError: 'HTTP 503' });
    expect((await store.deliveries.attempts(byEvent.get('R-0')!.id)).map((a) => a.responseBody)).to.deep.equal(['fine']);
    expect((await store.deliveries.attempts(byEvent.get('R-2')!.id)).map((a) => a.statusCode)).to.deep.equal([503]);
    // Another holder (the event fanned out again after its lease ended) records the same delivery: not applied, not stored twice.
    const [second] = await store.deliveries.recordAttempts([{
      claimId: 'lane#2', destinationId: DEST, at: T0 + 30, message: 'ok', pauseAfterMs: 0, http,
      updates: [{ id: -9, status: 'delivered', attempts: 1, nextAttemptAt: null, row: retry }],
    }]);
    expect(second.applied).to.deep.equal([]);
    expect(await store.deliveries.list({})).to.have.length(3);
    expect((await store.deliveries.claimDeliveries(DEST, 'c#1', T0 + 10_000, T0 + 20_000, 10)).map((d) => d.eventId)).to.deep.equal(['R-1']);
  });

  it('handed-off deliveries handed back unsent are stored pending and due; a delivered row keeps no item and, replayed, is claimed to be mapped again', async () => {
    await appendAccepted(2, 'back', 'K', T0, { event: { name: 'lead_created' } });
    const claimed = await store.deliveries.claimEvents('fan#f', T0, 60_000, 10);
    const rows = claimed.map((e) => unstored(e.seq, e.event.eventId!));
    expect((await store.deliveries.storeHandoffs(rows, T0 + 5)).every((id) => typeof id === 'number')).to.equal(true);
    expect(await store.deliveries.storeHandoffs(rows, T0 + 6), 'stored already').to.deep.equal([null, null]);
    const taken = await store.deliveries.claimDeliveries(DEST, 'c#1', T0 + 5, T0 + 1_000, 10);
    expect(taken.map((d) => d.eventId)).to.deep.equal(['K-0', 'K-1']);
    expect(taken[0].item?.eventId).to.equal('K-0');
    await finish('c#1', [taken[0].id], 'delivered');
    const [delivered] = await store.deliveries.list({ status: 'delivered' });
    expect(delivered.item, 'what was sent is on its attempt').to.equal(null);
    expect(await store.deliveries.replay({ statuses: ['delivered'] }, T0 + 2_000)).to.equal(1);
    const again = (await store.deliveries.claimDeliveries(DEST, 'c#2', T0 + 2_000, T0 + 3_000, 10)).find((d) => d.eventId === 'K-0')!;
    expect(again.item).to.equal(null);
    expect(again.remap).to.deep.include({ part: 0, eventKey: 'K-0' });
    expect(again.remap?.event).to.deep.equal({ event: { name: 'lead_created' } });
  });

  it(`a fan-out of more rows than one commit holds (SQLite commits ${FAN_OUT_ROWS_PER_COMMIT} at most) answers as one: every event, handoff and count, in order`, async () => {
    const n = Math.ceil((FAN_OUT_ROWS_PER_COMMIT * 2.5) / 3);
    await appendAccepted(n, 'big', 'B');
    const claimed = await store.deliveries.claimEvents('fan#f', T0, 60_000, 10_000);
    expect(claimed).to.have.length(n);
    const commit = await fanOutClaimed(claimed, (e) => [
      { destinationId: DEST, destinationType: 'ga4', status: 'pending', part: 0, item: item(e.event.eventId!), handoff: true },
      { destinationId: DEST, destinationType: 'ga4', status: 'pending', part: 1, item: item(e.event.eventId!) },
      { destinationId: DEST, destinationType: 'ga4', status: 'skipped', part: 2, item: null, reason: 'consent' },
    ]);
    expect(commit.events).to.equal(n);
    expect(commit.pendingByDestination.get(DEST)).to.equal(n);
    expect(commit.handedOff).to.deep.equal(claimed.map((e) => e.seq));
    expect(await store.deliveries.list({ limit: 10_000 })).to.have.length(2 * n);
    expect(await store.deliveries.dispatchBacklog()).to.equal(n);
  });

  if (kind === 'sqlite') {
    it('SQLite stores a fan-out commit\'s rows destination by destination (recording one destination\'s attempts then rewrites adjacent pages)', async () => {
      const OTHER = 'dst_0000000000000002';
      await store.destinations.add({ id: OTHER, scriptId: 'ACCT0001', type: 'webhook', name: 'hook', enabled: true, settings: {} });
      await appendAccepted(10, 'mix', 'M');
      const claimed = await store.deliveries.claimEvents('fan#f', T0, 60_000, 100);
      await fanOutClaimed(claimed, (e) => [
        { destinationId: OTHER, destinationType: 'webhook', status: 'pending', part: 0, item: item(e.event.eventId!) },
        { destinationId: DEST, destinationType: 'ga4', status: 'pending', part: 0, item: item(e.event.eventId!) },
      ]);
      const rows = (await store.deliveries.list({ limit: 100 })).sort((a, b) => a.id - b.id);
      expect(rows.map((d) => d.destinationId)).to.deep.equal([...Array(10).fill(OTHER), ...Array(10).fill(DEST)]);
      expect(rows.slice(0, 10).map((d) => d.eventId), 'in event order within a destination').to.deep.equal(claimed.map((e) => e.event.eventId));
    });
  }

  it('lists one event row\'s deliveries, pages by id, and carries the stored item; events list by search, name, time and page', async () => {
    await seed(3);
    const all = await store.deliveries.list({});
    expect(all.map((d) => d.eventId)).to.deep.equal([`L-${T0}-2`, `L-${T0}-1`, `L-${T0}-0`]);
    expect(all[0].item?.eventId).to.equal(`L-${T0}-2`);
    const mine = await store.deliveries.list({ eventRowId: `ev-${T0}-1` });
    expect(mine.map((d) => d.eventId)).to.deep.equal([`L-${T0}-1`]);
    expect(await store.deliveries.list({ eventRowId: 'no-such-row' })).to.have.length(0);
    expect((await store.deliveries.list({ beforeId: all[0].id, limit: 1 })).map((d) => d.id)).to.deep.equal([all[1].id]);
    expect((await store.events.list({ search: `L-${T0}-1` })).map((e) => e.id)).to.deep.equal([`ev-${T0}-1`]);
    expect((await store.events.list({ search: `ev-${T0}-2` })).map((e) => e.id)).to.deep.equal([`ev-${T0}-2`]);
    const [newest] = await store.events.list({ id: `ev-${T0}-2` });
    expect((await store.events.list({ beforeSeq: newest.seq, limit: 1 })).map((e) => e.id)).to.deep.equal([`ev-${T0}-1`]);
    expect((await store.events.list({ beforeSeq: newest.seq + 1000 })).map((e) => e.id)).to.deep.equal([`ev-${T0}-2`, `ev-${T0}-1`, `ev-${T0}-0`]);
    expect(await store.events.list({ name: 'lead_created', since: T0, until: T0 + 1 })).to.have.length(3);
    expect(await store.events.list({ until: T0 })).to.have.length(0);
  });

  it('two claims never share a delivery; an expired lease makes it due again', async () => {
    await seed(10);
    const a = await store.deliveries.claimDeliveries(DEST, 'p1#1', T0, T0 + 5_000, 6);
    const b = await store.deliveries.claimDeliveries(DEST, 'p2#1', T0, T0 + 5_000, 6);
    expect(a).to.have.length(6);
    expect(b).to.have.length(4);
    expect(a.map((d) => d.id).filter((id) => b.some((x) => x.id === id))).to.deep.equal([]);
    expect(await store.deliveries.claimDeliveries(DEST, 'p3#1', T0 + 4_999, T0 + 9_999, 10)).to.have.length(0);
    expect(await store.deliveries.nextDue(DEST), 'a leased delivery is due when its lease ends').to.equal(T0 + 5_000);
    expect(await store.deliveries.claimDeliveries(DEST, 'p3#1', T0 + 5_000, T0 + 10_000, 10)).to.have.length(10);
  });

  it('a claim takes due retries before first attempts, however much older the first attempts are due; retriesOnly takes the retries alone', async () => {
    await seed(2, T0);
    const [r1, r2] = await store.deliveries.claimDeliveries(DEST, 'lane#1', T0, T0 + 1_000, 2);
    // Both refused: retries due at T0 + 10 s and T0 + 12 s, while a backlog of first attempts, due since T0 + 1 s, waits.
    await store.deliveries.recordAttempts([{
      claimId: 'lane#1', destinationId: DEST, at: T0, message: 'HTTP 503', pauseAfterMs: 0,
      http: { statusCode: 503, latencyMs: 3, responseBody: '', errorClass: null, outcome: 'retryable' },
      updates: [{ id: r2.id, status: 'pending', attempts: 1, nextAttemptAt: T0 + 12_000 }, { id: r1.id, status: 'pending', attempts: 1, nextAttemptAt: T0 + 10_000 }],
    }]);
    await seed(5, T0 + 1_000);
    const retryIds = (ds: { eventId: string | null }[]) => ds.map((d) => d.eventId);
    expect(retryIds(await store.deliveries.claimDeliveries(DEST, 'early#1', T0 + 9_000, T0 + 60_000, 2)), 'no retry due yet: the oldest first attempts')
      .to.deep.equal([`L-${T0 + 1_000}-0`, `L-${T0 + 1_000}-1`]);
    const claimed = await store.deliveries.claimDeliveries(DEST, 'lane#2', T0 + 10_000, T0 + 20_000, 3);
    expect(retryIds(claimed), 'the due retry first, then the oldest first attempts').to.deep.equal([`L-${T0}-0`, `L-${T0 + 1_000}-2`, `L-${T0 + 1_000}-3`]);
    expect(claimed[0].attempts).to.equal(1);
    expect(await store.deliveries.claimDeliveries(DEST, 'lane#3', T0 + 11_000, T0 + 20_000, 10, { retriesOnly: true }), 'nothing more is a due retry').to.have.length(0);
    const retries = await store.deliveries.claimDeliveries(DEST, 'lane#3', T0 + 12_000, T0 + 20_000, 10, { retriesOnly: true });
    expect(retryIds(retries), 'retries only: the first attempts still due are left').to.deep.equal([`L-${T0}-1`]);
    expect(retryIds(await store.deliveries.claimDeliveries(DEST, 'lane#4', T0 + 12_000, T0 + 20_000, 10))).to.deep.equal([`L-${T0 + 1_000}-4`]);
  });

  it('fencing: a stale claim cannot complete a delivery that a newer claim holds', async () => {
    await seed(1);
    const [d] = await store.deliveries.claimDeliveries(DEST, 'stale#1', T0, T0 + 1_000, 1);
    await store.deliveries.claimDeliveries(DEST, 'fresh#1', T0 + 1_000, T0 + 2_000, 1);
    const [stale] = await finish('stale#1', [d.id], 'delivered');
    expect(stale.applied).to.deep.equal([]);
    expect((await store.deliveries.list({}))[0].status).to.equal('pending');
    expect(await store.deliveries.attempts(d.id), 'the attempt itself is on record').to.have.length(1);
    const [fresh] = await finish('fresh#1', [d.id], 'delivered');
    expect(fresh.applied).to.deep.equal([d.id]);
    expect((await store.deliveries.list({}))[0].status).to.equal('delivered');
    expect((await store.deliveries.attempts(d.id))[0].responseBody, 'response kept up to 20 000 bytes').to.have.length(20_000);
    expect(await store.deliveries.release('stale#1', T0, [d.id])).to.equal(0);
  });

  it('an attempt keeps the request it sent; one recorded without it reads null', async () => {
    await seed(2);
    const [a, b] = await store.deliveries.claimDeliveries(DEST, 'sent#1', T0, T0 + 1_000, 2);
    const request = { method: 'POST', url: 'https://x.example/hook', headers: { 'webhook-timestamp': '1800000000', 'webhook-signature': '****' }, body: '{"id":"L-1"}', bodyBytes: 12, bodySha256: 'ab'.repeat(32), bodyTruncated: false };
    await store.deliveries.recordAttempts([{
      claimId: 'sent#1', destinationId: DEST, at: T0, message: 'ok', pauseAfterMs: 0,
      http: { request, statusCode: 200, latencyMs: 3, responseBody: '', errorClass: null, outcome: 'success' },
      updates: [{ id: a.id, status: 'delivered', attempts: 1, nextAttemptAt: null }],
    }]);
    await finish('sent#1', [b.id], 'delivered');
    expect((await store.deliveries.attempts(a.id))[0].request).to.deep.equal(request);
    expect((await store.deliveries.attempts(b.id))[0].request).to.equal(null);
  });

  it('releaseOwner hands back every lease of one process and no other', async () => {
    await seed(4);
    await store.deliveries.claimDeliveries(DEST, 'host/1/aa#1', T0, T0 + 60_000, 2);
    await store.deliveries.claimDeliveries(DEST, 'host/1/aab#1', T0, T0 + 60_000, 2);
    expect(await store.deliveries.leaseHolders()).to.have.members(['host/1/aa#1', 'host/1/aab#1']);
    expect(await store.deliveries.releaseOwner('host/1/aa', T0)).to.equal(2);
    expect(await store.deliveries.leaseHolders()).to.deep.equal(['host/1/aab#1']);
    expect(await store.deliveries.recoverExpiredLeases(T0 + 60_000)).to.equal(2);
    expect(await store.deliveries.leaseHolders()).to.deep.equal([]);
  });

  it('replay re-queues dead and failed ones, never a delivered one unless asked, and skips removed destinations', async () => {
    await seed(3);
    const [x, y, z] = await store.deliveries.claimDeliveries(DEST, 'c#1', T0, T0 + 1_000, 3);
    await finish('c#1', [x.id], 'dead');
    await finish('c#1', [y.id], 'failed');
    await finish('c#1', [z.id], 'delivered');
    expect(await store.deliveries.replay({ statuses: ['dead'] }, T0 + 10)).to.equal(1);
    expect(await store.deliveries.replay({ statuses: ['dead', 'failed'] }, T0 + 10)).to.equal(1);
    const rows = await store.deliveries.list({});
    expect(rows.map((r) => [r.id, r.status, r.attempts, r.nextAttemptAt])).to.have.deep.members([
      [x.id, 'pending', 0, T0 + 10], [y.id, 'pending', 0, T0 + 10], [z.id, 'delivered', 1, null],
    ]);
    expect(await store.deliveries.replay({ statuses: ['dead', 'failed'], since: T0 + 1 }, T0 + 20), '--since before creation').to.equal(0);
    expect(await store.deliveries.replay({ statuses: ['delivered'] }, T0 + 20)).to.equal(1);
    const [w] = await store.deliveries.claimDeliveries(DEST, 'c#2', T0 + 30, T0 + 1_000, 1);
    await finish('c#2', [w.id], 'dead');
    await store.destinations.remove('ACCT0001', DEST);
    expect(await store.deliveries.replay({ statuses: ['dead'] }, T0 + 40)).to.equal(0);
  });

  it('replay with a limit re-queues the oldest matching first; countReplayable counts what replay would take', async () => {
    await seed(5);
    const claimed = await store.deliveries.claimDeliveries(DEST, 'c#1', T0, T0 + 1_000, 5);
    await finish('c#1', claimed.slice(0, 4).map((d) => d.id), 'dead');
    await finish('c#1', [claimed[4].id], 'delivered');
    expect(await store.deliveries.countReplayable({ statuses: ['dead'] })).to.equal(4);
    expect(await store.deliveries.countReplayable({ statuses: ['dead', 'delivered'], scriptId: 'ACCT0001' })).to.equal(5);
    expect(await store.deliveries.countReplayable({ statuses: ['dead'], scriptId: 'ACCT0002' })).to.equal(0);
    expect(await store.deliveries.replay({ statuses: ['dead'], limit: 3 }, T0 + 10)).to.equal(3);
    const ids = claimed.map((d) => d.id).sort((p, q) => p - q);
    const pending = (await store.deliveries.list({ status: 'pending' })).map((d) => d.id).sort((p, q) => p - q);
    expect(pending, 'the three oldest').to.deep.equal(ids.filter((id) => claimed.slice(0, 4).some((d) => d.id === id)).slice(0, 3));
    expect(await store.deliveries.countReplayable({ statuses: ['dead'] })).to.equal(1);
    expect(await store.deliveries.replay({ statuses: ['dead'], limit: 3 }, T0 + 10)).to.equal(1);
    expect(await store.deliveries.countReplayable({ statuses: ['dead'] })).to.equal(0);
  });

  it('removing a destination cancels its free pending deliveries at once; a leased one when its lease is handed back', async () => {
    await seed(3);
    // T0 lies ahead of the wall clock that removal uses: this lease is live.
    const [held] = await store.deliveries.claimDeliveries(DEST, 'lane#1', T0, T0 + 60_000, 1);
    expect(await store.destinations.remove('ACCT0001', DEST)).to.deep.equal({ removed: true, canceled: 2 });
    expect(await store.destinations.remove('ACCT0001', DEST)).to.deep.equal({ removed: false, canceled: 0 });
    const rows = await store.deliveries.list({ limit: 10 });
    const others = rows.filter((r) => r.id !== held.id);
    expect(others.map((r) => [r.status, r.skipReason, r.lastError])).to.deep.equal([
      ['skipped', 'destination_removed', 'canceled: the destination was removed'],
      ['skipped', 'destination_removed', 'canceled: the destination was removed']]);
    expect(rows.find((r) => r.id === held.id)?.status, 'left to its lease holder').to.equal('pending');
    await store.deliveries.release('lane#1', T0, [held.id]);
    expect(await store.deliveries.expireStranded(T0, 0)).to.deep.equal({ removed: 1, expired: 0 });
    expect((await store.deliveries.list({ limit: 10 })).every((r) => r.status === 'skipped')).to.equal(true);
  });

  it('pending deliveries of a destination disabled or paused past retention expire, and retention then purges them and their events', async () => {
    const DAY = 86_400_000;
    await seed(2, T0);
    await seed(1, T0 + 40 * DAY);
    await store.destinations.update('ACCT0001', DEST, { enabled: false });
    const before = T0 + 30 * DAY;
    expect((await store.deliveries.purge(before)).events, 'pending work pins its events').to.equal(0);
    expect(await store.deliveries.expireStranded(T0 + 41 * DAY, before)).to.deep.equal({ removed: 0, expired: 2 });
    const rows = await store.deliveries.list({ limit: 10 });
    expect(rows.map((r) => [r.status, r.skipReason]).sort()).to.deep.equal([['pending', null], ['skipped', 'expired'], ['skipped', 'expired']]);
    expect(await store.deliveries.purge(before)).to.deep.equal({ events: 2, deliveries: 2, attempts: 0 });
    expect(await store.events.list({ limit: 10 })).to.have.length(1);
    // An enabled, unpaused destination's old pending work is never expired (it is being retried).
    await store.destinations.update('ACCT0001', DEST, { enabled: true });
    expect(await store.deliveries.expireStranded(T0 + 90 * DAY, T0 + 60 * DAY)).to.deep.equal({ removed: 0, expired: 0 });
  });

  it('retryNow makes waiting retries due now, for all, one account or one destination; leased ones are left alone', async () => {
    await seed(3);
    const now = T0 + 10;
    const claimed = await store.deliveries.claimDeliveries(DEST, 'c#1', T0, T0 + 1_000, 3);
    await store.deliveries.recordAttempts([{
      claimId: 'c#1', destinationId: DEST, at: T0, message: 'HTTP 500', pauseAfterMs: 0,
      http: { statusCode: 500, latencyMs: 3, responseBody: '', errorClass: null, outcome: 'retryable' },
      updates: claimed.slice(0, 2).map((d) => ({ id: d.id, status: 'pending' as const, attempts: 1, nextAttemptAt: T0 + 3_600_000 })),
    }]);
    expect(await store.deliveries.retryNow({ destinationId: 'dst_other' }, now)).to.equal(0);
    expect(await store.deliveries.retryNow({ scriptId: 'ACCT0001', destinationId: DEST }, now), 'the third is still leased').to.equal(2);
    const due = await store.deliveries.claimDeliveries(DEST, 'c#2', now, now + 1_000, 10);
    expect(due.map((d) => d.id).sort()).to.deep.equal(claimed.slice(0, 2).map((d) => d.id).sort());
  });

  it('purge removes old events, finished deliveries and attempts, but never pending work or what it needs', async () => {
    const DAY = 86_400_000;
    await seed(3, T0);
    await store.events.append([{ id: 'rej', scriptId: 'ACCT0001', name: 'x', eventId: null, status: 'rejected', source: 'event', requestId: 'r', receivedAt: T0, errors: [], warnings: [], payload: {} }]);
    await seed(2, T0 + 40 * DAY);
    const old = await store.deliveries.claimDeliveries(DEST, 'c#1', T0, T0 + 1_000, 3);
    await finish('c#1', [old[0].id], 'delivered');
    await finish('c#1', [old[1].id], 'dead');
    await store.deliveries.release('c#1', T0, [old[2].id]); // stays pending
    const r = await store.deliveries.purge(T0 + 30 * DAY);
    expect(r).to.deep.equal({ events: 3, deliveries: 2, attempts: 2 });
    const left = await store.deliveries.list({ limit: 100 });
    expect(left.map((d) => d.status).sort()).to.deep.equal(['pending', 'pending', 'pending']);
    expect((await store.events.list({ limit: 100 })).length, 'the pending delivery keeps its event').to.equal(3);
    const claimed = await store.deliveries.claimDeliveries(DEST, 'c#2', T0 + 41 * DAY, T0 + 42 * DAY, 10);
    expect(claimed.every((c) => c.item !== null), 'pending work can still be rebuilt').to.equal(true);
  });

  it('purgeDedupKeys deletes keys first seen before the window', async () => {
    await seed(2, T0);
    await seed(1, T0 + 10_000);
    expect(await store.deliveries.purgeDedupKeys(T0 + 1)).to.equal(2);
    expect(await store.events.isDuplicate('ACCT0001', 'lead_created', `L-${T0 + 10_000}-0`, T0 + 10_001)).to.equal(true);
  });

});

/** A database file in a new temp dir, migrated only up to schema `version` (as an older release left it). */
function databaseAtVersion(version: number): { dir: string; file: string; db: Database.Database } {
  const dir = tempDir('tl-dstore-');
  const file = join(dir, 'old.db');
  const db = new Database(file);
  for (const [i, sql] of MIGRATIONS.slice(0, version).entries()) {
    db.exec(sql);
    db.pragma(`user_version = ${i + 1}`);
  }
  return { dir, file, db };
}

describe('delivery: SQLite migration 5', () => {
  it('queues the events acknowledged before delivery existed', async () => {
    const { dir, file, db } = databaseAtVersion(4);
    const insert = db.prepare(`INSERT INTO events (id, script_id, name, event_id, status, source, request_id, received_at, errors, warnings, payload)
      VALUES (?, 'ACCT0001', 'lead_created', ?, ?, 'event', 'r', 1, '[]', '[]', '{}')`);
    insert.run('a', 'L1', 'accepted');
    insert.run('b', 'L2', 'rejected');
    insert.run('c', 'L3', 'accepted');
    db.close();
    const upgraded = openSqliteStore({ file });
    try {
      expect(await upgraded.deliveries.dispatchBacklog()).to.equal(2);
    } finally {
      await upgraded.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('delivery: SQLite migration 9 (the event-id index moves to events)', () => {
  it('finds, lists and replays deliveries by event id after the upgrade, through events_event_id', async () => {
    const { dir, file, db } = databaseAtVersion(8);
    const event = db.prepare(`INSERT INTO events (id, script_id, name, event_id, status, source, request_id, received_at, errors, warnings, payload)
      VALUES (?, ?, 'lead_created', ?, 'accepted', 'event', 'r', 1, '[]', '[]', '{}')`);
    const delivery = db.prepare(`INSERT INTO deliveries (event_seq, script_id, destination_id, destination_type, event_id, item, status,
      received_at, created_at, updated_at) VALUES (?, ?, ?, 'webhook', ?, '{}', ?, 1, 1, 1)`);
    const seqA = Number(event.run('a', 'ACCT0001', 'L-1').lastInsertRowid);
    const seqB = Number(event.run('b', 'ACCT0002', 'L-1').lastInsertRowid); // the same event id in another account
    const seqC = Number(event.run('c', 'ACCT0001', 'L-2').lastInsertRowid);
    db.pragma('foreign_keys = OFF'); // bare destination rows, no accounts
    for (const [id, script] of [['dst_a', 'ACCT0001'], ['dst_b', 'ACCT0001'], ['dst_c', 'ACCT0002']]) {
      db.prepare("INSERT INTO destinations (id, script_id, type, name, settings, created_at, updated_at) VALUES (?, ?, 'webhook', ?, '{}', 1, 1)").run(id, script, id);
    }
    delivery.run(seqA, 'ACCT0001', 'dst_a', 'L-1', 'dead');
    delivery.run(seqA, 'ACCT0001', 'dst_b', 'L-1', 'delivered');
    delivery.run(seqB, 'ACCT0002', 'dst_c', 'L-1', 'dead');
    delivery.run(seqC, 'ACCT0001', 'dst_a', 'L-2', 'dead');
    db.close();
    const upgraded = openSqliteStore({ file });
    try {
      const ids = async (f: { scriptId?: string; eventId: string }) => (await upgraded.deliveries.list(f)).map((d) => [d.scriptId, d.destinationId, d.eventId]);
      expect(await ids({ eventId: 'L-1' })).to.deep.equal([['ACCT0002', 'dst_c', 'L-1'], ['ACCT0001', 'dst_b', 'L-1'], ['ACCT0001', 'dst_a', 'L-1']]);
      expect(await ids({ scriptId: 'ACCT0001', eventId: 'L-1' })).to.deep.equal([['ACCT0001', 'dst_b', 'L-1'], ['ACCT0001', 'dst_a', 'L-1']]);
      expect(await ids({ scriptId: 'ACCT0001', eventId: 'L-3' })).to.deep.equal([]);
      expect(await upgraded.deliveries.replay({ scriptId: 'ACCT0001', eventId: 'L-1', statuses: ['dead'] }, 5)).to.equal(1);
      expect((await upgraded.deliveries.list({ eventId: 'L-1', status: 'pending' })).map((d) => d.destinationId)).to.deep.equal(['dst_a']);
    } finally {
      await upgraded.close();
    }
    const after = new Database(file, { readonly: true });
    try {
      const indexes = (after.prepare("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql LIKE '%event_id)%'").all() as { name: string; tbl_name: string }[]);
      expect(indexes).to.deep.equal([{ name: 'events_event_id', tbl_name: 'events' }]);
      const plan = (after.prepare('EXPLAIN QUERY PLAN SELECT seq FROM events WHERE event_id = ?').all('L-1') as { detail: string }[]).map((r) => r.detail).join(' ');
      expect(plan).to.include('events_event_id');
    } finally {
      after.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('delivery: SQLite claims and bookkeeping', () => {
  /** A store on a temp file with one account and these accepted events; removed afterwards. */
  async function withStore(ids: string[], run: (store: Store, file: string) => Promise<void>): Promise<void> {
    const dir = tempDir('tl-dstore-');
    const file = join(dir, 'tracklane.db');
    const store = openSqliteStore({ file });
    try {
      await store.accounts.create({ scriptId: 'ACCT0001', name: 'a', tier: 'FLEX', addon: true, host: null, country: null, taxRate: null }, 'h', 'p');
      await store.events.append(ids.map((id) => ({
        id, scriptId: 'ACCT0001', name: 'lead_created', eventId: `L-${id}`, status: 'accepted' as const, source: 'event', requestId: 'r',
        receivedAt: T0, errors: [], warnings: [], payload: { event: { name: 'lead_created', id } },
      })));
      await run(store, file);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('a queued event whose row was purged is dropped from the queue, and the others are claimed with their rows', () =>
    withStore(['a', 'b', 'c'], async (store, file) => {
      const raw = new Database(file);
      raw.prepare("DELETE FROM events WHERE id = 'b'").run();
      raw.close();
      const claimed = await store.deliveries.claimEvents('c#1', T0, 1_000, 10);
      expect(claimed.map((c) => c.event.eventId)).to.deep.equal(['L-a', 'L-c']);
      expect(claimed.map((c) => (c.event.payload as { event: { id: string } }).event.id)).to.deep.equal(['a', 'c']);
      expect(await store.deliveries.dispatchBacklog(), 'the purged one left the queue').to.equal(2);
    }));

  it('bookkeeping (committed with synchronous=NORMAL) leaves the connection at FULL for everything else', () =>
    withStore(['a'], async (_store, file) => {
      const db = openConnection(file);
      try {
        migrate(db);
        const deliveries = sqliteDeliveryStore(db);
        expect(await deliveries.claimEvents('c#1', T0, 1_000, 10)).to.have.length(1);
        expect(db.pragma('synchronous', { simple: true }), 'FULL again after the claim').to.equal(2);
        await deliveries.release('c#1', T0, [1]);
        expect(db.pragma('synchronous', { simple: true }), 'FULL again after a release').to.equal(2);
      } finally {
        db.close();
      }
    }));
});

describe('delivery: SQLite migration 16 (items in a table of their own)', () => {
  it('moves each stored item to delivery_items: a pending delivery is claimed with it, and deliveries keeps no item column', async () => {
    const { dir, file, db } = databaseAtVersion(15);
    const seq = Number(db.prepare(`INSERT INTO events (id, script_id, name, event_id, status, source, request_id, received_at, errors, warnings, payload)
      VALUES ('a', 'ACCT0001', 'lead_created', 'L-1', 'accepted', 'event', 'r', 1, '[]', '[]', '{"event":{"name":"lead_created"}}')`).run().lastInsertRowid);
    db.prepare('DELETE FROM dispatch_queue').run();
    const item = JSON.stringify({ native: { rule: 'r', fields: {} }, eventId: 'L-1', identifiers: {}, attribution: {}, receivedAt: 1 });
    const delivery = db.prepare(`INSERT INTO deliveries (event_seq, script_id, destination_id, destination_type, event_id, part, item, status,
      next_attempt_at, received_at, created_at, updated_at) VALUES (?, 'ACCT0001', ?, 'webhook', 'L-1', 0, ?, ?, 1, 1, 1, 1)`);
    delivery.run(seq, 'dst_a', item, 'pending');
    delivery.run(seq, 'dst_b', null, 'delivered');
    db.close();
    const upgraded = openSqliteStore({ file });
    try {
      const [claimed] = await upgraded.deliveries.claimDeliveries('dst_a', 'c#1', 10, 1_000, 10);
      expect(claimed.item?.eventId).to.equal('L-1');
      expect(claimed.item?.event).to.deep.equal({ event: { name: 'lead_created' } });
      const check = new Database(file, { readonly: true });
      expect((check.prepare('SELECT name FROM pragma_table_info(\'deliveries\')').all() as { name: string }[]).map((c) => c.name)).not.to.include('item');
      expect(check.prepare('SELECT count(*) AS n FROM delivery_items').get()).to.deep.equal({ n: 1 });
      check.close();
    } finally {
      await upgraded.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
