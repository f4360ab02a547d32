// A delivery delivered by its first attempt has no row (docs/delivered-without-row.md), once
// per store kind: its attempt lists it, and every view still shows it as a delivered
// delivery (listings with their filters, order and pages, show and its attempt, stats), a
// forced replay gives it a row and sends it again, the purge takes it with its attempt, and a
// fan-out of its event again (the process died before the event left the queue) skips it.
import { expect } from 'chai';
import { decodeDeliveryId, derivedDeliveryId, partKey, type AttemptRecord, type StoredItem, type UnstoredRow } from '../../src/store/delivery-contract.ts';
import type { Store } from '../../src/store/types.ts';
import { STORE_KINDS, STORE_LABEL, rawCounter, storeHarness } from '../helpers/stores.ts';


const T0 = 1_800_000_000_000;
const HOOK = 'dst_0000000000000001';
const META = 'dst_0000000000000002';
const OTHER = 'dst_0000000000000003';
const item = (eventId: string): StoredItem => ({ native: { rule: 'r', fields: {} } as never, eventId, identifiers: {}, attribution: {}, receivedAt: T0 });
const ok = { statusCode: 200, latencyMs: 5, responseBody: null, errorClass: null, outcome: 'success' as const };

describe('derived delivery ids', () => {
  it('decode to their attempt and index; row ids decode to null', () => {
    for (const [a, i] of [[1, 0], [7, 4095], [2 ** 40 - 1, 12]]) {
      const id = derivedDeliveryId(a, i);
      expect(Number.isSafeInteger(id), `${a}/${i}`).to.equal(true);
      expect(decodeDeliveryId(id)).to.deep.equal({ attemptId: a, index: i });
    }
    expect(decodeDeliveryId(1)).to.equal(null);
    expect(decodeDeliveryId(2 ** 52 - 1)).to.equal(null);
    expect(derivedDeliveryId(1, 4095)).to.be.below(derivedDeliveryId(2, 0));
  });
});

for (const kind of STORE_KINDS) describe(`store (${STORE_LABEL[kind]}): a delivery delivered by its first attempt has no row`, function () {
  this.timeout(20_000);
  const harness = storeHarness(kind);
  let store: Store;
  let raw: Awaited<ReturnType<typeof rawCounter>>;
  const count = (sql: string) => raw.count(sql);
  let n = 0;

  beforeEach(async () => {
    store = await harness.open();
    raw = await rawCounter(harness);
    for (const a of ['ACCT0001', 'ACCT0002']) await store.accounts.create({ scriptId: a, name: a, tier: 'FLEX', addon: true, host: null, country: null, taxRate: null }, `h-${a}`, `p-${a}`);
    await store.destinations.add({ id: HOOK, scriptId: 'ACCT0001', type: 'webhook', name: 'w', enabled: true, settings: {} });
    await store.destinations.add({ id: META, scriptId: 'ACCT0001', type: 'meta', name: 'm', enabled: true, settings: {} });
    await store.destinations.add({ id: OTHER, scriptId: 'ACCT0002', type: 'webhook', name: 'o', enabled: true, settings: {} });
  });
  afterEach(async () => {
    await raw.close();
    await harness.close();
  });

  /** Events of `scriptId` fanned out to `dests`, each delivery handed to a lane under `claim`: the rows their records would write, per destination. */
  async function handedOff(scriptId: string, eventIds: string[], dests: string[], claim: string, at = T0): Promise<Map<string, UnstoredRow[]>> {
    await store.events.append(eventIds.map((eventId) => ({
      id: `row-${eventId}`, scriptId, name: 'lead_created', eventId, status: 'accepted' as const,
      source: 'event', requestId: 'r', receivedAt: at, errors: [], warnings: [], payload: { event: { name: 'lead_created', id: eventId } },
    })));
    const claimed = await store.deliveries.claimEvents(claim, at, 60_000, 100);
    const type = (d: string) => (d === META ? 'meta' : 'webhook');
    await store.deliveries.completeFanOut(claim, at, claimed.map((e) => ({ seq: e.seq, scriptId, eventId: e.event.eventId, receivedAt: at,
      deliveries: dests.map((d) => ({ destinationId: d, destinationType: type(d), status: 'pending' as const, item: item(e.event.eventId!), part: 0, handoff: true })) })));
    return new Map(dests.map((d) => [d, claimed.map((e) => ({ eventSeq: e.seq, scriptId, destinationId: d, destinationType: type(d),
      eventId: e.event.eventId, receivedAt: at, part: 0, item: item(e.event.eventId!) }))]));
  }

  /** One request to `dest` that delivered `rows`. */
  const delivered = (claim: string, dest: string, at: number, rows: readonly UnstoredRow[]): AttemptRecord => ({
    claimId: claim, destinationId: dest, at, http: ok, message: 'ok', pauseAfterMs: 0,
    updates: rows.map((row) => ({ id: -(++n), status: 'delivered' as const, attempts: 1, nextAttemptAt: null, row })),
  });

  /** Three events of ACCT0001 to the webhook (one request each) and Meta (one request for all), one of ACCT0002, and a retried one with a row. */
  async function scene() {
    const one = await handedOff('ACCT0001', ['L-1', 'L-2', 'L-3'], [HOOK, META], 'fan#1');
    const hook = one.get(HOOK)!;
    const results = await store.deliveries.recordAttempts([
      delivered('fan#1', HOOK, T0 + 10, [hook[0]]), delivered('fan#1', META, T0 + 11, one.get(META)!),
      delivered('fan#1', HOOK, T0 + 12, [hook[1]]), delivered('fan#1', HOOK, T0 + 13, [hook[2]]),
    ]);
    const two = await handedOff('ACCT0002', ['L-1'], [OTHER], 'fan#2', T0 + 20);
    await store.deliveries.recordAttempts([delivered('fan#2', OTHER, T0 + 21, two.get(OTHER)!)]);
    const retried = (await handedOff('ACCT0001', ['L-4'], [HOOK], 'fan#3', T0 + 30)).get(HOOK)![0];
    await store.deliveries.recordAttempts([{ ...delivered('fan#3', HOOK, T0 + 31, [retried]), http: { ...ok, statusCode: 503, outcome: 'retryable' },
      updates: [{ id: -(++n), status: 'pending', attempts: 1, nextAttemptAt: T0 + 40, row: retried }] }]);
    return { results, seqs: hook.map((r) => r.eventSeq) };
  }

  it('writes no deliveries or delivery_items row: the attempt lists it, and its update counts as applied', async () => {
    const rows = (await handedOff('ACCT0001', ['L-1', 'L-2'], [HOOK], 'fan#1')).get(HOOK)!;
    const [r] = await store.deliveries.recordAttempts([delivered('fan#1', HOOK, T0 + 1, rows)]);
    expect(r.applied).to.have.length(2);
    expect(await count('SELECT count(*) AS n FROM deliveries'), 'rows').to.equal(0);
    expect(await count('SELECT count(*) AS n FROM delivery_items'), 'items').to.equal(0);
    expect(await count('SELECT count(*) AS n FROM delivery_attempt_items'), 'links').to.equal(0);
    expect(await store.deliveries.finishEvents('fan#1', rows.map((x) => x.eventSeq)), 'the events leave the queue').to.equal(2);
    const list = await store.deliveries.list({});
    expect(list.map((d) => [d.eventId, d.status, d.attempts, d.lastStatusCode, d.part, d.item, d.destinationType, d.deliveredAt! - T0]))
      .to.deep.equal([['L-2', 'delivered', 1, 200, 0, null, 'webhook', 1], ['L-1', 'delivered', 1, 200, 0, null, 'webhook', 1]]);
    expect(list[0]).to.include({ scriptId: 'ACCT0001', destinationId: HOOK, receivedAt: T0, lastError: null, nextAttemptAt: null, skipReason: null, paused: false });
  });

  it('lists them like rows: by status, event id, event row id, account, destination; newest first; pages across both', async () => {
    await scene();
    const all = await store.deliveries.list({});
    expect(all.map((d) => `${d.eventId}>${d.destinationId.slice(-1)}:${d.status}`)).to.deep.equal([
      'L-1>3:delivered', 'L-3>1:delivered', 'L-2>1:delivered', 'L-3>2:delivered', 'L-2>2:delivered', 'L-1>2:delivered', 'L-1>1:delivered',
      'L-4>1:pending',
    ]);
    const ids = all.map((d) => d.id);
    expect([...ids].sort((a, b) => b - a), 'newest (highest id) first').to.deep.equal(ids);
    const pick = async (f: Parameters<Store['deliveries']['list']>[0]) => (await store.deliveries.list(f)).map((d) => ids.indexOf(d.id));
    expect(await pick({ status: 'delivered' })).to.deep.equal([0, 1, 2, 3, 4, 5, 6]);
    expect(await pick({ status: 'pending' })).to.deep.equal([7]);
    expect(await pick({ eventId: 'L-1' })).to.deep.equal([0, 5, 6]);
    expect(await pick({ eventId: 'L-1', scriptId: 'ACCT0001' })).to.deep.equal([5, 6]);
    expect(await pick({ eventRowId: 'row-L-3' })).to.deep.equal([1, 3]);
    expect(await pick({ scriptId: 'ACCT0002' })).to.deep.equal([0]);
    expect(await pick({ scriptId: 'ACCT0001', status: 'delivered' })).to.deep.equal([1, 2, 3, 4, 5, 6]);
    expect(await pick({ destinationId: HOOK })).to.deep.equal([1, 2, 6, 7]);
    expect(await pick({ destinationId: META, eventId: 'L-2' })).to.deep.equal([4]);
    const paged: number[] = [];
    for (let beforeId: number | undefined; ;) {
      const page = await store.deliveries.list({ beforeId, limit: 3 });
      paged.push(...page.map((d) => d.id));
      if (page.length < 3) break;
      beforeId = page[2].id;
    }
    expect(paged, 'pages of 3').to.deep.equal(ids);
    expect(await pick({ beforeId: ids[2], destinationId: HOOK, limit: 2 })).to.deep.equal([6, 7]);
    for (const id of ids) expect((await store.deliveries.list({ id })).map((d) => d.id), `show ${id}`).to.deep.equal([id]);
    expect(await store.deliveries.list({ id: ids[0] + 4096 * 1000 }), 'no such attempt').to.deep.equal([]);
  });

  it('show: a derived id has its attempt; stats count them as delivered', async () => {
    await scene();
    const [meta] = await store.deliveries.list({ destinationId: META, limit: 1 });
    const attempts = await store.deliveries.attempts(meta.id);
    expect(attempts.map((a) => [a.statusCode, a.events, a.attemptedAt - T0])).to.deep.equal([[200, 3, 11]]);
    const counts = (await store.deliveries.stats()).map((s) => [s.destinationId.slice(-1), s.counts.delivered, s.counts.pending]);
    expect(counts).to.deep.equal([['1', 3, 1], ['2', 3, 0], ['3', 1, 0]]);
    expect((await store.deliveries.stats('ACCT0002')).map((s) => s.counts.delivered)).to.deep.equal([1]);
  });

  it('replay --force gives one a pending row without item, mapped again and delivered again; counted before', async () => {
    await scene();
    expect(await store.deliveries.countReplayable({ statuses: ['delivered'], eventId: 'L-2' })).to.equal(2);
    expect(await store.deliveries.countReplayable({ statuses: ['delivered'] })).to.equal(7);
    expect(await store.deliveries.countReplayable({ statuses: ['failed', 'dead'] }), 'not without delivered').to.equal(0);
    const [before] = await store.deliveries.list({ destinationId: HOOK, eventId: 'L-2' });
    expect(await store.deliveries.replay({ statuses: ['delivered'], deliveryId: before.id }, T0 + 50)).to.equal(1);
    expect(await store.deliveries.list({ id: before.id }), 'the derived one is gone').to.deep.equal([]);
    expect(await store.deliveries.countReplayable({ statuses: ['delivered'] })).to.equal(6);
    const [row] = await store.deliveries.list({ destinationId: HOOK, eventId: 'L-2' });
    expect(row).to.include({ status: 'pending', attempts: 0, item: null, part: 0, eventId: 'L-2', receivedAt: T0, nextAttemptAt: T0 + 50 });
    expect(row.id).to.be.below(2 ** 52);
    const claimed = await store.deliveries.claimDeliveries(HOOK, 'lane#1', T0 + 60, T0 + 120_000, 10);
    const again = claimed.find((c) => c.id === row.id)!;
    expect(again.remap, 'mapped again from its event').to.deep.include({ part: 0, eventKey: 'L-2' });
    await store.deliveries.recordAttempts([{ claimId: 'lane#1', destinationId: HOOK, at: T0 + 70, http: ok, message: 'ok', pauseAfterMs: 0,
      updates: [{ id: row.id, status: 'delivered', attempts: 1, nextAttemptAt: null }] }]);
    const [done] = await store.deliveries.list({ id: row.id });
    expect(done).to.include({ status: 'delivered', deliveredAt: T0 + 70 });
    expect((await store.deliveries.attempts(row.id)).map((a) => a.attemptedAt - T0), 'its history: both attempts').to.deep.equal([12, 70]);
    expect((await store.deliveries.list({ status: 'delivered', eventId: 'L-2' })).length, 'once each').to.equal(2);
    expect((await store.deliveries.stats('ACCT0001')).map((s) => s.counts.delivered)).to.deep.equal([3, 3]);
    expect(await store.deliveries.replay({ statuses: ['delivered'], scriptId: 'ACCT0002', limit: 5 }, T0 + 80), 'bulk').to.equal(1);
    // Oldest first: the row (L-2, delivered again), then the oldest attempt's (L-1 to the webhook).
    expect(await store.deliveries.replay({ statuses: ['delivered'], limit: 2 }, T0 + 80), 'oldest first, limited').to.equal(2);
    expect((await store.deliveries.list({ status: 'pending' })).map((d) => `${d.eventId}>${d.destinationId.slice(-1)}`).sort())
      .to.deep.equal(['L-1>1', 'L-1>3', 'L-2>1', 'L-4>1']);
  });

  it('purge takes them with their attempt; an event a kept attempt lists stays', async () => {
    const old = (await handedOff('ACCT0001', ['L-1'], [HOOK], 'fan#1')).get(HOOK)!;
    await store.deliveries.recordAttempts([delivered('fan#1', HOOK, T0 + 10, old)]);
    await store.deliveries.finishEvents('fan#1', [old[0].eventSeq]);
    const young = (await handedOff('ACCT0001', ['L-2'], [HOOK, META], 'fan#2', T0 + 100)).get(HOOK)!;
    // Received before the cutoff, delivered after it.
    await store.deliveries.recordAttempts([delivered('fan#2', HOOK, T0 + 1_000, young)]);
    await store.deliveries.finishEvents('fan#2', [young[0].eventSeq]);
    const r = await store.deliveries.purge(T0 + 500);
    expect(r).to.deep.equal({ events: 1, deliveries: 1, attempts: 1 });
    expect((await store.deliveries.list({})).map((d) => d.eventId)).to.deep.equal(['L-2']);
    expect((await store.events.list({ scriptId: 'ACCT0001' })).map((e) => e.eventId), 'its event stays').to.deep.equal(['L-2']);
  });

  it('a fan-out of the event again (the process died before it left the queue) skips what an attempt delivered', async () => {
    const rows = await handedOff('ACCT0001', ['L-1'], [HOOK, META], 'fan#1');
    await store.deliveries.recordAttempts([delivered('fan#1', HOOK, T0 + 1, rows.get(HOOK)!)]);
    // No finishEvents: the process died; its lease ends.
    const [again] = await store.deliveries.claimEvents('fan#9', T0 + 120_000, 60_000, 10);
    expect(again.seq).to.equal(rows.get(HOOK)![0].eventSeq);
    expect([...(again.stored ?? [])], 'not mapped or sent again').to.deep.equal([partKey(HOOK, 0)]);
  });

  it('two processes that both sent it (the event fanned out again meanwhile): listed once, a later record not applied (delivered or refused)', async () => {
    const [row] = (await handedOff('ACCT0001', ['L-1'], [HOOK], 'fan#1')).get(HOOK)!;
    const [first] = await store.deliveries.recordAttempts([delivered('fan#2', HOOK, T0 + 1, [row])]);
    const [late] = await store.deliveries.recordAttempts([delivered('fan#1', HOOK, T0 + 2, [row])]);
    const [refused] = await store.deliveries.recordAttempts([{ ...delivered('fan#3', HOOK, T0 + 3, [row]), http: { ...ok, statusCode: 503, outcome: 'retryable' },
      updates: [{ id: -(++n), status: 'pending', attempts: 1, nextAttemptAt: T0 + 40, row }] }]);
    expect([first.applied.length, late.applied.length, refused.applied.length]).to.deep.equal([1, 0, 0]);
    expect((await store.deliveries.list({})).map((d) => [d.eventId, d.deliveredAt! - T0])).to.deep.equal([['L-1', 1]]);
    expect(await count('SELECT count(*) AS n FROM deliveries'), 'and no row').to.equal(0);
  });

  it('a delivery stored while in flight keeps its row, updated as before; its attempt lists nothing', async () => {
    const [row, other] = (await handedOff('ACCT0001', ['L-1', 'L-2'], [HOOK], 'fan#1')).get(HOOK)!;
    const [id] = await store.deliveries.storeHandoffs([row], T0 + 1, { claimId: 'fan#1', leaseUntil: T0 + 60_000 });
    const [r] = await store.deliveries.recordAttempts([delivered('fan#1', HOOK, T0 + 2, [row, other])]);
    expect(r.applied).to.have.length(2);
    expect(await count("SELECT count(*) AS n FROM deliveries WHERE status = 'delivered'"), 'the stored row, delivered').to.equal(1);
    expect((await store.deliveries.list({ eventId: 'L-1' })).map((d) => [d.id, d.status])).to.deep.equal([[id, 'delivered']]);
    expect((await store.deliveries.list({ eventId: 'L-2' }))[0].id).to.be.above(2 ** 52);
  });
});
