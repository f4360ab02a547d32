// PostgreSQL's work notifications say what was added: an intake commit announces events (the
// other instances wake their fan-out only), a delivery change announces deliveries (their lanes
// wake too). Before, every intake commit woke every lane of every instance: a claim query per
// lane per commit per instance.
import { expect } from 'chai';
import type { Store, WorkKind } from '../../src/store/types.ts';
import { storeHarness } from '../helpers/stores.ts';
import { waitFor } from '../helpers/test-server.ts';

describe('store (PostgreSQL): work notifications by kind', function () {
  this.timeout(20_000);
  const harness = storeHarness('postgres');
  let store: Store;
  const DEST = 'dst_00000000000000n1';

  beforeEach(async () => {
    store = await harness.open();
    await store.accounts.create({ scriptId: 'ACCTNOTE', name: 'n', tier: 'FLEX', addon: true, host: null, country: null, taxRate: null }, 'h', 'p');
    await store.destinations.add({ id: DEST, scriptId: 'ACCTNOTE', type: 'webhook', name: 'w', enabled: true, settings: {} });
  });
  afterEach(() => harness.close());

  const event = (id: string, status: 'accepted' | 'rejected') => ({
    id, scriptId: 'ACCTNOTE', name: 'lead_created', eventId: `N-${id}`, status, source: 'event', requestId: 'r',
    receivedAt: Date.now(), errors: [], warnings: [], payload: {},
  });

  it('an intake commit announces events; a fan-out that stores pending deliveries announces deliveries; a rejected event or a handoff nothing', async () => {
    const heard: WorkKind[] = [];
    const stop = store.onWork!((kind) => heard.push(kind));
    try {
      // The listener connects first (it announces 'deliveries' once connected: work may have been missed).
      await waitFor(() => heard.length > 0, 5_000);
      heard.length = 0;
      await store.events.append([event('a', 'rejected')]);
      await store.events.append([event('b', 'accepted')]);
      expect(await waitFor(() => heard.length > 0, 5_000)).to.equal(true);
      expect(heard).to.deep.equal(['events']);
      const [claimed] = await store.deliveries.claimEvents('fan#1', Date.now(), 60_000, 10);
      const item = { native: { rule: 'r', fields: {} } as never, eventId: 'N-b', identifiers: {}, attribution: {}, receivedAt: 1 };
      await store.deliveries.completeFanOut('fan#1', Date.now(), [{ seq: claimed.seq, scriptId: 'ACCTNOTE', eventId: 'N-b', receivedAt: 1,
        deliveries: [{ destinationId: DEST, destinationType: 'webhook', status: 'pending', part: 0, item, handoff: true }] }]);
      await store.events.append([event('c', 'accepted')]);
      await waitFor(() => heard.length >= 2, 5_000);
      expect(heard, 'the handoff announced nothing').to.deep.equal(['events', 'events']);
      const next = (await store.deliveries.claimEvents('fan#2', Date.now(), 60_000, 10)).find((e) => e.event.eventId === 'N-c')!;
      await store.deliveries.completeFanOut('fan#2', Date.now(), [{ seq: next.seq, scriptId: 'ACCTNOTE', eventId: 'N-c', receivedAt: 1,
        deliveries: [{ destinationId: DEST, destinationType: 'webhook', status: 'pending', part: 0, item }] }]);
      await waitFor(() => heard.length >= 3, 5_000);
      expect(heard).to.deep.equal(['events', 'events', 'deliveries']);
    } finally {
      stop();
    }
  });
});
