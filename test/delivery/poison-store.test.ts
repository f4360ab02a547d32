// The store's side of poison events, SQLite and PostgreSQL alike: a claim counts against an
// event until its fan-out completes, an event some fan-out left unfinished (its thread died
// while mapping it) is claimed alone, a retake by the same claim or a completed fan-out does
// not count, and replaying a mapping_failed delivery queues its event for the fan-out again
// for that destination (merged into what a queued event still owes).
import { expect } from 'chai';
import { MAPPING_FAILED, type DispatchEvent, type FanOutResult } from '../../src/store/delivery-contract.ts';
import type { Store } from '../../src/store/types.ts';
import { STORE_KINDS, STORE_LABEL, storeHarness } from '../helpers/stores.ts';

const T0 = 1_800_000_000_000;
const DEST = 'dst_0000000000000001';
const DEST2 = 'dst_0000000000000002';

for (const kind of STORE_KINDS) describe(`delivery: ${STORE_LABEL[kind]} store, poison events`, () => {
  let store: Store;
  const harness = storeHarness(kind);

  beforeEach(async () => {
    store = await harness.open();
    await store.accounts.create({ scriptId: 'ACCT0001', name: 'a', tier: 'FLEX', addon: true, host: null, country: null, taxRate: null }, 'h', 'p');
    for (const id of [DEST, DEST2]) await store.destinations.add({ id, scriptId: 'ACCT0001', type: 'webhook', name: id, enabled: true, settings: {} });
  });
  afterEach(() => harness.close());

  const append = (ids: string[]) => store.events.append(ids.map((id) => ({
    id, scriptId: 'ACCT0001', name: 'lead_created', eventId: id, status: 'accepted' as const, source: 'event', requestId: 'r',
    receivedAt: T0, errors: [], warnings: [], payload: { event: { name: 'lead_created', id } },
  })));
  const claim = (claimId: string, at = T0) => store.deliveries.claimEvents(claimId, at, 60_000, 10);
  const brief = (events: DispatchEvent[]) => events.map((e) => [e.event.eventId, e.interrupted ?? 0]);
  /** Completes `claimId` for `events`, each with the rows `rows` gives. */
  const complete = (claimId: string, events: DispatchEvent[], rows: (e: DispatchEvent) => FanOutResult['deliveries']) =>
    store.deliveries.completeFanOut(claimId, T0, events.map((e) => ({ seq: e.seq, scriptId: 'ACCT0001', eventId: e.event.eventId, receivedAt: T0, deliveries: rows(e) })));
  const failedRow = (destinationId: string): FanOutResult['deliveries'][number] =>
    ({ destinationId, destinationType: 'webhook', status: 'failed', part: 0, item: null, reason: MAPPING_FAILED, message: 'mapping stopped the thread' });

  it('counts claims left unfinished by a thread that died; a suspect is claimed alone until it completes or is failed', async () => {
    await append(['A', 'B', 'C']);
    expect(brief(await claim('dead1/1/x#fan-out.0')), 'a first claim: no suspicion').to.deep.equal([['A', 0], ['B', 0], ['C', 0]]);
    await store.deliveries.releaseOwner('dead1/1/x', T0); // the thread died mapping them
    expect(brief(await claim('dead2/1/y#fan-out.0')), 'each is a suspect now: the first alone').to.deep.equal([['A', 1]]);
    await store.deliveries.releaseOwner('dead2/1/y', T0); // and died again, with A alone
    const third = await claim('live/1/z#fan-out.0');
    expect(brief(third), 'twice interrupted').to.deep.equal([['A', 2]]);
    await complete('live/1/z#fan-out.0', third, () => [failedRow(DEST)]);
    const b = await claim('live/1/z#fan-out.1');
    expect(brief(b), 'the other suspects go one by one').to.deep.equal([['B', 1]]);
    await complete('live/1/z#fan-out.1', b, () => []);
    expect(brief(await claim('live/1/z#fan-out.2'))).to.deep.equal([['C', 1]]);
    const rows = await store.deliveries.list({});
    expect(rows.map((r) => [r.eventId, r.status, r.skipReason])).to.deep.equal([['A', 'failed', MAPPING_FAILED]]);
  });

  it('a claim stops before a suspect (the events ahead of it go together, the suspect alone next); its own claim retaking it adds no count', async () => {
    await append(['H', 'S']);
    const [h] = await claim('dead/1/x#fan-out.0');
    // H was mapped and handed off (queued, leased, counted finished); the thread died mapping S.
    await complete('dead/1/x#fan-out.0', [h], (e) => [{ destinationId: DEST, destinationType: 'webhook', status: 'pending', part: 0, handoff: true,
      item: { native: { rule: 'r', fields: {} } as never, eventId: e.event.eventId!, identifiers: {}, attribution: {}, receivedAt: T0 } }]);
    await store.deliveries.releaseOwner('dead/1/x', T0);
    await append(['N']);
    const first = await claim('live/1/y#fan-out.0');
    expect(brief(first), 'stops before the suspect').to.deep.equal([['H', 0]]);
    await complete('live/1/y#fan-out.0', first, () => []);
    expect(brief(await claim('live/1/y#fan-out.1'))).to.deep.equal([['S', 1]]);
    expect(brief(await claim('live/1/y#fan-out.1', T0 + 10)), 'a failed completion retaken by its claim: no new count').to.deep.equal([['S', 1]]);
  });

  it('an event its fan-out finished but left queued (handoffs, holds) starts counting again from nothing', async () => {
    await append(['H']);
    const first = await claim('live/1/x#fan-out.0');
    await complete('live/1/x#fan-out.0', first, (e) => [{ destinationId: DEST, destinationType: 'webhook', status: 'pending', part: 0, handoff: true,
      item: { native: { rule: 'r', fields: {} } as never, eventId: e.event.eventId!, identifiers: {}, attribution: {}, receivedAt: T0 } }]);
    await store.deliveries.releaseOwner('live/1/x', T0); // the thread died while its lane sent it
    expect(brief(await claim('next/1/y#fan-out.0')), 'mapped fine before: no suspect').to.deep.equal([['H', 0]]);
  });

  it('replaying a mapping_failed delivery queues its event for the fan-out again, for that destination', async () => {
    await append(['P', 'Q']);
    const [p, q] = await claim('live/1/x#fan-out.0');
    // P failed for both destinations; Q failed for DEST and is still queued, held for DEST2.
    await complete('live/1/x#fan-out.0', [p], () => [failedRow(DEST), failedRow(DEST2)]);
    await store.deliveries.completeFanOut('live/1/x#fan-out.0', T0, [{ seq: q.seq, scriptId: 'ACCT0001', eventId: 'Q', receivedAt: T0,
      deliveries: [failedRow(DEST)], held: { destinationIds: [DEST2], claimId: 'live/1/x#held#0', leaseUntil: T0 } }]);
    expect(await store.deliveries.dispatchBacklog()).to.equal(1);
    expect(await store.deliveries.countReplayable({ statuses: ['failed'] })).to.equal(3);
    expect(await store.deliveries.replay({ statuses: ['failed'], destinationId: DEST }, T0 + 10)).to.equal(2);
    const queued = await claim('live/1/x#fan-out.1', T0 + 10);
    expect(queued.map((e) => [e.event.eventId, [...(e.heldFor ?? [])].sort(), e.interrupted ?? 0])).to.deep.equal([
      ['P', [DEST], 0], ['Q', [DEST, DEST2].sort(), 0],
    ]);
    const rows = await store.deliveries.list({});
    expect(rows.map((r) => [r.eventId, r.destinationId, r.status])).to.deep.equal([['P', DEST2, 'failed']]);
    expect(await store.deliveries.replay({ statuses: ['failed'], limit: 1 }, T0 + 20), 'a limit counts them').to.equal(1);
  });
});
