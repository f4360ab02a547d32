// PostgreSQL's fan-out cursor (docs/fan-out-cursor-postgres.md), through the store API on a real
// database: intake writes no dispatch_queue row; events are read after a per-partition cursor
// of (transaction id, seq) positions, so an event committed after a later seq is still read;
// the cursor moves only past settled events; partition leases are taken over after expiry
// (what was being mapped comes back interrupted, alone; what was mapped comes back with the
// rows it has), split between owners, and handed back by releaseOwner; held events, the
// backlog, purge, and a database upgraded from version 14 with queued events.
import { expect } from 'chai';
import pg from 'pg';
import type { Store } from '../../src/store/types.ts';
import type { DispatchEvent, FanOutResult } from '../../src/store/delivery-contract.ts';
import { partKey } from '../../src/store/delivery-contract.ts';
import type { StoredItem } from '../../src/delivery/types.ts';
import { isPoison } from '../../src/delivery/poison.ts';
import { openPostgresStore } from '../../src/store/postgres/pg-store.ts';
import { FAN_RUN, partOf } from '../../src/store/postgres/fan-out-cursor.ts';
import { storeHarness } from '../helpers/stores.ts';

const T0 = 1_800_000_000_000;
const DEST = 'dst_0000000000000001';
const item = (eventId: string): StoredItem => ({ native: { rule: 'r', fields: {} } as never, eventId, identifiers: {}, attribution: {}, receivedAt: T0 });

describe('store (PostgreSQL): fan-out from the event log after a cursor', () => {
  const harness = storeHarness('postgres');
  let store: Store;
  let raw: pg.Client;
  const others: Store[] = [];
  let n = 0;

  beforeEach(async () => {
    store = await harness.open();
    raw = new pg.Client({ connectionString: harness.database!.url });
    await raw.connect();
    await store.accounts.create({ scriptId: 'ACCT0001', name: 'a', tier: 'FLEX', addon: true, host: null, country: null, taxRate: null }, 'h', 'p');
    await store.destinations.add({ id: DEST, scriptId: 'ACCT0001', type: 'ga4', name: 'ga4', enabled: true, settings: {} });
  });
  afterEach(async () => {
    for (const o of others.splice(0)) await o.close();
    await raw.end();
    await harness.close();
  });

  /** Another instance on the same database (a store object of its own). */
  const instance = async (): Promise<Store> => {
    const s = await openPostgresStore({ url: harness.database!.url });
    others.push(s);
    return s;
  };
  const append = (count: number, at = T0) => store.events.append(Array.from({ length: count }, () => ({
    id: `ev-${++n}`, scriptId: 'ACCT0001', name: 'lead_created', eventId: `L-${n}`, status: 'accepted' as const,
    source: 'event', requestId: 'r', receivedAt: at, errors: [], warnings: [], payload: { event: { name: 'lead_created' } },
  })));
  const count = async (sql: string) => Number((await raw.query<{ n: string }>(sql)).rows[0].n);
  const cursor = async (part: number) => (await raw.query<{ cursor_seq: number; lease_owner: string | null }>(
    'SELECT cursor_seq::int, lease_owner FROM fanout_cursors WHERE part = $1', [part])).rows[0];
  /** Completes `claimed` under `claimId` with one stored pending row each, or what `rows` gives. */
  const complete = (s: Store, claimId: string, claimed: readonly DispatchEvent[], rows?: (e: DispatchEvent) => FanOutResult['deliveries'], extra: Partial<FanOutResult> = {}) =>
    s.deliveries.completeFanOut(claimId, T0, claimed.map((e) => ({
      seq: e.seq, scriptId: 'ACCT0001', eventId: e.event.eventId, receivedAt: T0, ...extra,
      deliveries: rows?.(e) ?? [{ destinationId: DEST, destinationType: 'ga4', status: 'pending' as const, part: 0, item: item(e.event.eventId!) }],
    })));
  const handoff = (e: DispatchEvent): FanOutResult['deliveries'] => [
    { destinationId: DEST, destinationType: 'ga4', status: 'pending', part: 0, item: item(e.event.eventId!), handoff: true },
    { destinationId: DEST, destinationType: 'ga4', status: 'pending', part: 1, item: item(e.event.eventId!) },
  ];
  const insertEvent = (c: pg.Client, id: string) => c.query<{ seq: number }>(`INSERT INTO events (id, script_id, name, event_id, status, source, request_id,
      received_at, errors, warnings, payload) VALUES ($1, 'ACCT0001', 'lead_created', $1, 'accepted', 'event', 'r', ${T0}, '[]', '[]', '{}') RETURNING seq`, [id]);

  it('intake writes no dispatch_queue row; the backlog and the queue snapshot count the events after the cursor', async () => {
    await append(5);
    await store.events.append([{ id: 'rej', scriptId: 'ACCT0001', name: 'lead_created', eventId: 'R', status: 'rejected', source: 'event', requestId: 'r',
      receivedAt: T0, errors: [], warnings: [], payload: {} }]);
    expect(await count('SELECT count(*) AS n FROM dispatch_queue')).to.equal(0);
    expect(await store.deliveries.dispatchBacklog()).to.equal(5);
    expect((await store.deliveries.queueSnapshot()).dispatchBacklog).to.equal(5);
    const claimed = await store.deliveries.claimEvents('fan#1', T0, 60_000, 100);
    expect(claimed.map((e) => e.event.eventId)).to.deep.equal([1, 2, 3, 4, 5].map((i) => `L-${n - 5 + i}`));
    expect(claimed.every((e) => e.stored === undefined && e.interrupted === undefined)).to.equal(true);
    expect(await store.deliveries.dispatchBacklog(), 'claimed, not settled').to.equal(5);
    await complete(store, 'fan#1', claimed);
    expect(await store.deliveries.dispatchBacklog()).to.equal(0);
    expect((await store.deliveries.queueSnapshot()).dispatchBacklog).to.equal(0);
    expect(await count('SELECT count(*) AS n FROM deliveries')).to.equal(5);
    expect(await count('SELECT count(*) AS n FROM fanout_cursors WHERE lease_owner IS NOT NULL'), 'partitions with nothing open are released').to.equal(0);
    expect(await store.deliveries.claimEvents('fan#2', T0, 60_000, 100)).to.deep.equal([]);
  });

  it('an event committed after an event with a later seq is still read: positions are (transaction id, seq)', async () => {
    const early = new pg.Client({ connectionString: harness.database!.url });
    const late = new pg.Client({ connectionString: harness.database!.url });
    await early.connect();
    await late.connect();
    try {
      // `late` takes its transaction id first, then stores the later seq; `early` stores the earlier seq and commits last.
      await late.query('BEGIN');
      await late.query('SELECT pg_current_xact_id()');
      await early.query('BEGIN');
      const [{ seq: first }] = (await insertEvent(early, 'E-early')).rows;
      const [{ seq: second }] = (await insertEvent(late, 'E-late')).rows;
      expect(Number(second)).to.be.greaterThan(Number(first));
      await late.query('COMMIT');
      const claimed = await store.deliveries.claimEvents('fan#1', T0, 60_000, 100);
      expect(claimed.map((e) => e.event.eventId), 'the later seq, committed; the earlier one is not visible yet').to.deep.equal(['E-late']);
      await complete(store, 'fan#1', claimed);
      expect((await cursor(partOf(Number(second)))).cursor_seq, 'the cursor passed the later seq').to.equal(Number(second));
      await early.query('COMMIT');
    } finally {
      await early.end();
      await late.end();
    }
    const again = await store.deliveries.claimEvents('fan#2', T0, 60_000, 100);
    expect(again.map((e) => e.event.eventId), 'the earlier seq, committed last').to.deep.equal(['E-early']);
  });

  it('an event stored by a transaction still running holds back the events of transactions that began after it', async () => {
    const open = new pg.Client({ connectionString: harness.database!.url });
    await open.connect();
    try {
      await open.query('BEGIN');
      await insertEvent(open, 'E-open');
      await append(2);
      expect(await store.deliveries.claimEvents('fan#1', T0, 60_000, 100), 'nothing after the running transaction').to.deep.equal([]);
      expect(await store.deliveries.dispatchBacklog(), 'counted all the same').to.equal(2);
      await open.query('COMMIT');
    } finally {
      await open.end();
    }
    const claimed = await store.deliveries.claimEvents('fan#1', T0, 60_000, 100);
    expect(claimed.map((e) => e.event.eventId).sort()).to.deep.equal(['E-open', `L-${n - 1}`, `L-${n}`]);
  });

  it('the cursor moves only past settled events: a handed-off event holds it until finishEvents', async () => {
    await append(17);
    const claimed = await store.deliveries.claimEvents('fan#1', T0, 60_000, 100);
    expect(claimed).to.have.length(17);
    const part = partOf(claimed[0].seq);
    const mine = claimed.filter((e) => partOf(e.seq) === part).map((e) => e.seq);
    expect(mine.length).to.be.greaterThan(2);
    // The partition's first event hands a delivery off; the others (and the other partitions' events) settle now.
    const commit = await complete(store, 'fan#1', claimed, (e) => (e.seq === mine[0] ? handoff(e) : [
      { destinationId: DEST, destinationType: 'ga4', status: 'skipped', part: 0, item: null, reason: 'consent' }]));
    expect(commit.handedOff).to.deep.equal([mine[0]]);
    expect(await cursor(part), 'held before the open event').to.deep.equal({ cursor_seq: 0, lease_owner: 'fan' });
    expect(await store.deliveries.dispatchBacklog(), 'the holder counts the open one').to.equal(1);
    expect(await (await instance()).deliveries.dispatchBacklog(), 'another instance: every event after the cursor').to.equal(mine.length);
    expect(await store.deliveries.finishEvents('other#1', [mine[0]]), 'another claim: fenced').to.equal(0);
    expect(await store.deliveries.finishEvents('fan#1', [mine[0]])).to.equal(1);
    expect(await cursor(part), 'past all of them, released').to.deep.equal({ cursor_seq: mine[mine.length - 1], lease_owner: null });
    expect(await store.deliveries.dispatchBacklog()).to.equal(0);
  });

  it('an expired partition is taken over by another owner: what was being mapped comes back interrupted and alone (poison after two), what was mapped with its rows', async () => {
    await append(1);
    const [mapped] = await store.deliveries.claimEvents('a#1', T0, 1_000, 10);
    await complete(store, 'a#1', [mapped], handoff); // mapped, its handoff never recorded
    await append(1);
    const [cut] = await store.deliveries.claimEvents('a#2', T0, 1_000, 10); // never completed: the process died mapping it
    expect(cut.seq).to.not.equal(mapped.seq);
    const b = await instance();
    expect(await b.deliveries.claimEvents('b#1', T0 + 500, 1_000, 10), 'leased to a').to.deep.equal([]);
    const first = await b.deliveries.claimEvents('b#1', T0 + 1_000, 1_000, 10);
    expect(first.map((e) => [e.seq, e.interrupted, [...e.stored ?? []]]), 'the mapped one, with the row it has').to.deep.equal([[mapped.seq, undefined, [partKey(DEST, 1)]]]);
    await complete(b, 'b#1', first, () => [{ destinationId: DEST, destinationType: 'ga4', status: 'pending', part: 0, item: item('x') }]);
    const [alone] = await b.deliveries.claimEvents('b#2', T0 + 1_000, 1_000, 10);
    expect([alone.seq, alone.interrupted]).to.deep.equal([cut.seq, 1]);
    expect(isPoison(alone)).to.equal(false);
    // b dies mapping it too: the next holder is told it was cut short twice.
    const c = await instance();
    const [twice] = await c.deliveries.claimEvents('c#1', T0 + 2_000, 1_000, 10);
    expect([twice.seq, twice.interrupted, isPoison(twice)]).to.deep.equal([cut.seq, 2, true]);
    expect((await complete(store, 'a#2', [cut])).events, 'the first holder\'s late completion is fenced').to.equal(0);
    expect((await complete(c, 'c#1', [twice], () => [])).events).to.equal(1);
    expect(await store.deliveries.dispatchBacklog()).to.equal(0);
    expect(await count('SELECT count(*) AS n FROM deliveries')).to.equal(2);
  });

  it('two instances claim disjoint events, each holding partitions of its own, and both show as lease holders', async () => {
    // Ten events in each of four partitions (runs of FAN_RUN seqs).
    for (let run = 1; run <= 4; run++) {
      await raw.query("SELECT setval(pg_get_serial_sequence('events', 'seq'), $1, false)", [run * FAN_RUN]);
      await append(10);
    }
    const b = await instance();
    const seen = new Set<number>();
    for (let i = 0; i < 2; i++) {
      for (const [s, id] of [[store, `a#${i}`], [b, `b#${i}`]] as const) {
        const claimed = await s.deliveries.claimEvents(id, T0, 60_000, 10);
        expect(claimed).to.have.length(10);
        for (const e of claimed) {
          expect(seen.has(e.seq), `seq ${e.seq} claimed twice`).to.equal(false);
          seen.add(e.seq);
        }
      }
    }
    expect(seen.size).to.equal(40);
    expect((await store.deliveries.leaseHolders()).sort()).to.deep.equal(['a', 'b']);
  });

  it('releaseOwner hands an owner\'s partitions back at once: its open events go to another owner, the one it was mapping as interrupted', async () => {
    await append(2);
    const claimed = await store.deliveries.claimEvents('a#1', T0, 60_000, 10);
    expect(claimed).to.have.length(2);
    await complete(store, 'a#1', claimed.slice(0, 1), handoff);
    const b = await instance();
    expect(await b.deliveries.claimEvents('b#1', T0, 60_000, 10)).to.deep.equal([]);
    expect(await store.deliveries.releaseOwner('a', T0)).to.be.greaterThan(0);
    expect(await store.deliveries.leaseHolders()).to.deep.equal([]);
    const again = await b.deliveries.claimEvents('b#1', T0, 60_000, 10);
    expect(again.map((e) => [e.seq, e.interrupted])).to.deep.equal([[claimed[0].seq, undefined]]);
    const [cut] = await b.deliveries.claimEvents('b#2', T0, 60_000, 10);
    expect([cut.seq, cut.interrupted]).to.deep.equal([claimed[1].seq, 1]);
  });

  it('a held event moves to dispatch_queue leased to the hold, the cursor passes it, and it comes back with what it owes', async () => {
    await append(1);
    const [e] = await store.deliveries.claimEvents('fan#1', T0, 60_000, 10);
    await complete(store, 'fan#1', [e], () => [], { held: { destinationIds: [DEST], claimId: 'fan#held#0', leaseUntil: T0 + 5_000 } });
    expect(await count('SELECT count(*) AS n FROM dispatch_queue WHERE held_for IS NOT NULL')).to.equal(1);
    expect((await cursor(partOf(e.seq))).cursor_seq).to.equal(e.seq);
    expect(await store.deliveries.dispatchBacklog()).to.equal(1);
    expect(await store.deliveries.claimEvents('fan#2', T0 + 1_000, 60_000, 10), 'leased to the hold').to.deep.equal([]);
    const [back] = await store.deliveries.claimEvents('fan#2', T0 + 5_000, 60_000, 10);
    expect([back.seq, back.heldFor]).to.deep.equal([e.seq, [DEST]]);
    await complete(store, 'fan#2', [back]);
    expect(await store.deliveries.dispatchBacklog()).to.equal(0);
  });

  it('purge keeps the events after the cursor, and purges them once fanned out', async () => {
    await append(3, T0 - 10_000);
    expect((await store.deliveries.purge(T0)).events).to.equal(0);
    const claimed = await store.deliveries.claimEvents('fan#1', T0, 60_000, 10);
    expect((await store.deliveries.purge(T0)).events, 'claimed, not settled').to.equal(0);
    await complete(store, 'fan#1', claimed, () => [{ destinationId: DEST, destinationType: 'ga4', status: 'skipped', part: 0, item: null, reason: 'consent' }]);
    await raw.query(`UPDATE deliveries SET updated_at = ${T0 - 5_000}, created_at = ${T0 - 5_000}`);
    expect((await store.deliveries.purge(T0)).events).to.equal(3);
  });

  it('a database at version 14 with dispatch_queue rows keeps them due after the upgrade; events stored since are read from the log', async () => {
    await store.close();
    // Version 14 as an older release left it: no cursor, intake queued each accepted event.
    await raw.query(`DROP TABLE fanout_cursors; DROP INDEX events_fan_out; ALTER TABLE events DROP COLUMN fan_xid;
      DELETE FROM schema_migrations WHERE version >= 15`);
    for (const id of ['old-1', 'old-2']) {
      const { rows: [{ seq }] } = await insertEvent(raw, id);
      await raw.query('INSERT INTO dispatch_queue (event_seq) VALUES ($1)', [seq]);
    }
    store = await openPostgresStore({ url: harness.database!.url });
    others.push(store);
    expect(await store.deliveries.dispatchBacklog()).to.equal(2);
    await append(1);
    expect(await store.deliveries.dispatchBacklog()).to.equal(3);
    const claimed = await store.deliveries.claimEvents('fan#1', T0, 60_000, 10);
    expect(claimed.map((e) => e.event.eventId)).to.deep.equal(['old-1', 'old-2', `L-${n}`]);
    await complete(store, 'fan#1', claimed);
    expect(await store.deliveries.dispatchBacklog()).to.equal(0);
    expect(await count('SELECT count(*) AS n FROM deliveries')).to.equal(3);
  });
});
