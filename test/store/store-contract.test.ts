// The Store contract beyond delivery, once per store: accounts and tokens, event appends
// with dedup (within a batch, against earlier batches, per environment, and after the
// window), funnel products, event listing, destinations. PostgreSQL alone: two instances
// (two pools) storing the same event at the same moment keep one `accepted`, and two
// instances migrating a new database at once both start.
import { expect } from 'chai';
import type { EventRecord, Store } from '../../src/store/types.ts';
import type { Issue } from '../../src/schema/types.ts';
import { openPostgresStore } from '../../src/store/postgres/pg-store.ts';
import { pgCustomRateLimiter, pgTokenBuckets } from '../../src/store/postgres/rate-buckets.ts';
import { STORE_KINDS, STORE_LABEL, storeHarness } from '../helpers/stores.ts';
import { createTestDatabase, requirePostgres } from '../helpers/postgres.ts';

const T0 = 1_800_000_000_000;
const WINDOW = 60_000;
let n = 0;
const row = (eventId: string | null, over: Partial<EventRecord> = {}): EventRecord => ({
  id: `row-${++n}`, scriptId: 'ACCT0001', name: 'checkout_completed', eventId, status: 'accepted', source: 'event', requestId: 'r',
  receivedAt: T0, errors: [], warnings: [], payload: { event: { name: 'checkout_completed', id: eventId }, products: [{ id: 'SKU-1' }] }, ...over,
});

for (const kind of STORE_KINDS) describe(`store contract (${STORE_LABEL[kind]})`, () => {
  const harness = storeHarness(kind);
  let store: Store;
  beforeEach(async () => {
    store = await harness.open({ dedupWindowMs: WINDOW });
    await store.accounts.create({ scriptId: 'ACCT0001', name: 'Shop', tier: 'FLEX', addon: true, host: 'https://shop.example', country: 'RO', taxRate: 19 }, 'hash-1', 'tlk_aaaa');
  });
  afterEach(() => harness.close());

  it('accounts: create, get, list, update, tokens and rotation', async () => {
    const a = await store.accounts.get('ACCT0001');
    expect(a).to.include({ scriptId: 'ACCT0001', name: 'Shop', tier: 'FLEX', addon: true, enabled: true, host: 'https://shop.example', country: 'RO', taxRate: 19, customer: null, rateLimit: null });
    expect(a!.extraEvents).to.deep.equal([]);
    const u = await store.accounts.update('ACCT0001', { tier: 'PRO', enabled: false, extraEvents: ['x_done'], rateLimit: 5, customer: 'demo' });
    expect(u).to.include({ tier: 'PRO', enabled: false, rateLimit: 5, customer: 'demo' });
    expect(u!.extraEvents).to.deep.equal(['x_done']);
    expect(a!.endpointPins).to.deep.equal({});
    const pinned = await store.accounts.update('ACCT0001', { endpointPins: { 'order-sync': 1, leads: 12 } });
    expect((await store.accounts.get('ACCT0001'))!.endpointPins).to.deep.equal({ 'order-sync': 1, leads: 12 });
    expect(pinned!.endpointPins).to.deep.equal({ 'order-sync': 1, leads: 12 });
    expect(await store.accounts.update('NOPE0000', { tier: 'PRO' })).to.equal(null);
    expect((await store.accounts.list()).map((x) => x.scriptId)).to.deep.equal(['ACCT0001']);
    expect((await store.accounts.activeTokens('ACCT0001', T0)).map((t) => t.hash)).to.deep.equal(['hash-1']);
    await store.accounts.rotateToken('ACCT0001', 'hash-2', 'tlk_bbbb', T0, T0 + 1_000);
    expect((await store.accounts.activeTokens('ACCT0001', T0 + 500)).map((t) => t.hash)).to.deep.equal(['hash-2', 'hash-1']);
    expect((await store.accounts.activeTokens('ACCT0001', T0 + 1_000)).map((t) => t.hash)).to.deep.equal(['hash-2']);
    const creds = await store.accounts.credentials('ACCT0001', T0 + 500);
    expect([creds.account?.scriptId, creds.tokens.map((t) => t.hash)], 'what a credential check reads').to.deep.equal(['ACCT0001', ['hash-2', 'hash-1']]);
    expect(await store.accounts.credentials('NOPE0000', T0)).to.deep.equal({ account: null, tokens: [] });
  });

  it('events: dedup within a batch, against earlier batches, per environment, and renewed after the window', async () => {
    expect(await store.events.append([row('O-1'), row('O-2'), row('O-1'), row(null), row('O-3', { status: 'rejected' })]))
      .to.deep.equal(['accepted', 'accepted', 'duplicate', 'accepted', 'rejected']);
    expect(await store.events.append([row('O-2', { receivedAt: T0 + 1 })])).to.deep.equal(['duplicate']);
    const dev = row('O-2', { payload: { event: { name: 'checkout_completed' }, context: { environment: 'dev' } } });
    expect(await store.events.append([dev]), 'dev has its own key space').to.deep.equal(['accepted']);
    expect(await store.events.append([row('O-1', { receivedAt: T0 + WINDOW })]), 'after the window').to.deep.equal(['accepted']);
    expect(await store.events.append([row('O-1', { receivedAt: T0 + WINDOW + 1 })])).to.deep.equal(['duplicate']);
    expect(await store.events.isDuplicate('ACCT0001', 'checkout_completed', 'O-2', T0 + 10)).to.equal(true);
    expect(await store.events.isDuplicate('ACCT0001', 'checkout_completed', 'O-2', T0 + WINDOW + 10)).to.equal(false);
    expect(await store.events.isDuplicate('ACCT0001', 'checkout_completed', 'O-9', T0)).to.equal(false);
    expect([...await store.events.seenProducts('ACCT0001', ['SKU-1', 'SKU-2'])], 'checkouts are no funnel source').to.deep.equal([]);
    await store.events.append([row(null, { name: 'product_viewed' }), row(null, { name: 'product_viewed', status: 'rejected', payload: { products: [{ id: 'SKU-2' }] } })]);
    expect([...await store.events.seenProducts('ACCT0001', ['SKU-1', 'SKU-2'])]).to.deep.equal(['SKU-1']);
    const listed = await store.events.list({ scriptId: 'ACCT0001', eventId: 'O-1', limit: 10 });
    expect(listed.map((e) => e.status)).to.deep.equal(['duplicate', 'accepted', 'duplicate', 'accepted']);
    expect(listed[3].payload).to.deep.equal(row('O-1').payload);
    expect((await store.events.list({ status: 'rejected' })).map((e) => e.eventId)).to.deep.equal([null, 'O-3']);
  });

  it('events: summaries list the same events without payload, their issues counted', async () => {
    const issue = (code: string) => ({ field: 'products[0].price', code: code as Issue['code'], message: 'x' });
    await store.events.append([
      row('S-1', { warnings: [issue('W1'), issue('W2'), issue('W3')] }),
      row('S-2', { status: 'rejected', errors: [issue('INVALID_FORMAT'), issue('INVALID_TYPE')], warnings: [issue('W1')] }),
    ]);
    const listed = await store.events.list({ scriptId: 'ACCT0001', limit: 10 });
    const summaries = await store.events.summaries({ scriptId: 'ACCT0001', limit: 10 });
    expect(summaries.map((e) => [e.seq, e.id])).to.deep.equal(listed.map((e) => [e.seq, e.id]));
    expect(summaries[0]).to.deep.equal({
      seq: listed[0].seq, id: listed[0].id, scriptId: 'ACCT0001', name: 'checkout_completed', eventId: 'S-2', status: 'rejected', source: 'event',
      receivedAt: T0, errorCount: 2, warningCount: 1, firstErrorCode: 'INVALID_FORMAT',
    });
    expect(summaries[1]).to.include({ eventId: 'S-1', errorCount: 0, warningCount: 3, firstErrorCode: null });
    expect((await store.events.summaries({ beforeSeq: listed[0].seq, limit: 10 })).map((e) => e.eventId)).to.deep.equal(['S-1']);
  });

  it('destinations: add, list, find, update, remove', async () => {
    await store.destinations.add({ id: 'dst_a', scriptId: 'ACCT0001', type: 'webhook', name: 'hook', enabled: true, settings: { url: 'https://x.example', secret: 's' } });
    const u = await store.destinations.update('ACCT0001', 'dst_a', { enabled: false, settings: { url: 'https://y.example' } });
    expect(u).to.include({ enabled: false, name: 'hook' });
    expect(u!.settings).to.deep.equal({ url: 'https://y.example' });
    expect(await store.destinations.update('ACCT0001', 'dst_none', { enabled: true })).to.equal(null);
    expect((await store.destinations.list('ACCT0001')).map((d) => d.id)).to.deep.equal(['dst_a']);
    expect(await store.destinations.find('dst_a')).to.include({ scriptId: 'ACCT0001', name: 'hook' });
    expect(await store.destinations.remove('ACCT0001', 'dst_a')).to.deep.equal({ removed: true, canceled: 0 });
    expect(await store.destinations.get('ACCT0001', 'dst_a')).to.equal(null);
    expect(await store.destinations.find('dst_a'), 'a removed destination is not found').to.equal(null);
    expect(await store.destinations.list('ACCT0001')).to.deep.equal([]);
  });
});

describe('store contract (PostgreSQL): several instances', function () {
  this.timeout(30_000);
  before(async function () {
    await requirePostgres(this);
  });

  it('two instances migrating a new database at once both start; two storing the same event at once keep one accepted', async () => {
    const db = await createTestDatabase();
    const [a, b] = await Promise.all([openPostgresStore({ url: db.url }), openPostgresStore({ url: db.url })]);
    try {
      await a.accounts.create({ scriptId: 'ACCT0001', name: 'Shop', tier: 'FLEX', addon: true, host: null, country: null, taxRate: null }, 'h', 'p');
      for (let i = 0; i < 20; i++) {
        const statuses = (await Promise.all([a.events.append([row(`RACE-${i}`)]), b.events.append([row(`RACE-${i}`)])])).flat();
        expect(statuses.sort(), `round ${i}`).to.deep.equal(['accepted', 'duplicate']);
      }
      expect(await a.deliveries.dispatchBacklog(), 'one dispatch per accepted event').to.equal(20);
    } finally {
      await a.close();
      await b.close();
      await db.drop();
    }
  });

  it('two instances share one rate limit: together they never admit more than the bucket holds', async () => {
    const db = await createTestDatabase();
    const [a, b] = await Promise.all([openPostgresStore({ url: db.url }), openPostgresStore({ url: db.url })]);
    try {
      const la = pgTokenBuckets(a.pool);
      const lb = pgTokenBuckets(b.pool);
      // 10/s: a burst of 20, taken one token per request from the database (exact).
      const waits = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? la : lb).take('ACCT0001', 10)));
      const admitted = waits.filter((w) => w === 0).length;
      expect(admitted, 'the burst, plus at most what refilled meanwhile').to.be.within(20, 22);
      expect(waits.filter((w) => w > 0).every((w) => w >= 1)).to.equal(true);
      // 1000/s: instances reserve 50-token chunks and spend them locally; still no more than the burst.
      const many = await Promise.all(Array.from({ length: 2_400 }, (_, i) => (i % 2 ? la : lb).take('ACCT0002', 1_000)));
      expect(many.filter((w) => w === 0).length).to.be.at.most(2_000 + 1_000); // burst + at most a second of refill
      // Custom endpoints: 5 at once, 60 a minute, shared too.
      const ca = pgCustomRateLimiter(a.pool);
      const cb = pgCustomRateLimiter(b.pool);
      const limit = { perMinute: 60, burst: 5 };
      const decisions = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? ca : cb).take('ACCT0001\u0000demo/orders\u0000production', limit)));
      expect(decisions.filter((d) => d.ok).length).to.be.within(5, 6);
      expect(decisions.find((d) => !d.ok)).to.deep.include({ ok: false, retryAfterSeconds: 1 });
    } finally {
      await a.close();
      await b.close();
      await db.drop();
    }
  });
});
