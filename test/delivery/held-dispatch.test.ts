// The dispatch queue's side of held rules (src/rules/rule-holds.ts), SQLite and PostgreSQL
// alike: a fan-out that holds some destinations stores the others' deliveries and keeps the
// event queued for the held ones only, leased to the hold's claim; releasing that claim (a
// rule change) or its lease ending gives the event back with the destinations it still owes.
import { expect } from 'chai';
import type { StoredItem } from '../../src/delivery/types.ts';
import type { Store } from '../../src/store/types.ts';
import { STORE_KINDS, STORE_LABEL, storeHarness } from '../helpers/stores.ts';

const T0 = 1_800_000_000_000;
const item = (eventId: string): StoredItem => ({ native: { rule: 'r', fields: {} } as never, eventId, identifiers: {}, attribution: {}, receivedAt: T0 });

for (const kind of STORE_KINDS) describe(`delivery: ${STORE_LABEL[kind]} dispatch queue holds`, () => {
  let store: Store;
  const GA = 'dst_00000000000000ga';
  const HOOK = 'dst_0000000000000hook';
  const harness = storeHarness(kind);

  beforeEach(async () => {
    store = await harness.open();
    await store.accounts.create({ scriptId: 'ACCT0001', name: 'a', tier: 'FLEX', addon: true, host: null, country: null, taxRate: null }, 'h', 'p');
    await store.events.append([{
      id: 'e1', scriptId: 'ACCT0001', name: 'lead_created', eventId: 'L1', status: 'accepted', source: 'event', requestId: 'r',
      receivedAt: T0, errors: [], warnings: [], payload: {},
    }]);
  });
  afterEach(() => harness.close());

  it('keeps the event queued for the held destination only, leased to the hold claim, until released', async () => {
    const [ev] = await store.deliveries.claimEvents('own#fan-out', T0, 1_000, 10);
    expect(ev.heldFor, 'never held').to.equal(undefined);
    const commit = await store.deliveries.completeFanOut('own#fan-out', T0, [{
      seq: ev.seq, scriptId: 'ACCT0001', eventId: 'L1', receivedAt: T0,
      deliveries: [{ destinationId: GA, destinationType: 'ga4', status: 'pending', part: 0, item: item('L1') }],
      held: { destinationIds: [HOOK], claimId: 'own#held#0', leaseUntil: T0 + 60_000 },
    }]);
    expect(commit.events).to.equal(1);
    expect((await store.deliveries.list({})).map((d) => d.destinationId), 'the other destination delivers now').to.deep.equal([GA]);
    expect(await store.deliveries.dispatchBacklog(), 'still queued').to.equal(1);
    expect(await store.deliveries.claimEvents('own#fan-out', T0 + 1_000, 1_000, 10), 'not taken again while held').to.have.length(0);

    expect(await store.deliveries.releaseOwner('own#held', T0 + 2_000), 'a rule change releases the hold claim').to.equal(1);
    const [again] = await store.deliveries.claimEvents('own#fan-out', T0 + 2_000, 1_000, 10);
    expect(again.seq).to.equal(ev.seq);
    expect(again.heldFor, 'only what it still owes').to.deep.equal([HOOK]);
    await store.deliveries.completeFanOut('own#fan-out', T0 + 2_000, [{
      seq: again.seq, scriptId: 'ACCT0001', eventId: 'L1', receivedAt: T0,
      deliveries: [{ destinationId: HOOK, destinationType: 'webhook', status: 'pending', part: 0, item: item('L1') }],
    }]);
    expect((await store.deliveries.list({})).map((d) => d.destinationId).sort()).to.deep.equal([GA, HOOK].sort());
    expect(await store.deliveries.dispatchBacklog()).to.equal(0);
  });

  it('a hold is fenced like any claim, and comes back on its own once its lease ends', async () => {
    const [ev] = await store.deliveries.claimEvents('old#fan-out', T0, 1_000, 10);
    const held = { destinationIds: [HOOK], claimId: 'old#held#0', leaseUntil: T0 + 60_000 };
    const result = { seq: ev.seq, scriptId: 'ACCT0001', eventId: 'L1', receivedAt: T0, deliveries: [], held };
    await store.deliveries.claimEvents('new#fan-out', T0 + 1_500, 1_000, 10); // the old lease lapsed
    expect((await store.deliveries.completeFanOut('old#fan-out', T0 + 1_600, [result])).events, 'stale hold fenced').to.equal(0);
    expect((await store.deliveries.completeFanOut('new#fan-out', T0 + 1_600, [{ ...result, held: { ...held, claimId: 'new#held#0' } }])).events).to.equal(1);
    expect(await store.deliveries.claimEvents('other#fan-out', T0 + 59_000, 1_000, 10)).to.have.length(0);
    const [back] = await store.deliveries.claimEvents('other#fan-out', T0 + 60_000, 1_000, 10);
    expect(back.heldFor).to.deep.equal([HOOK]);
  });
});
