// PostgreSQL's work notifications say what was added: an intake commit announces events (the
// other instances wake their fan-out only), a delivery change announces deliveries (their lanes
// wake too). Before, every intake commit woke every lane of every instance: a claim query per
// lane per commit per instance. Rule publishes and destination changes announce themselves to
// the watchers alone (an idle delivery thread's slowed polls), not as work, and a watcher hears
// of a lost listening connection. A watch of changes alone (its own connection) hears no intake
// commit.
import { expect } from 'chai';
import pg from 'pg';
import type { Store, WorkKind } from '../../src/store/types.ts';
import { storeHarness } from '../helpers/stores.ts';
import { waitFor } from '../helpers/test-server.ts';
import { WORK_CHANNEL } from '../../src/store/postgres/notify.ts';

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

  it('a rule publish and a destination add, update or removal announce themselves to watchers and wake no work; a watcher hears of the lost connection', async () => {
    const heard: WorkKind[] = [];
    const stopWork = store.onWork!((kind) => heard.push(kind));
    const watch: { stop: (() => void) | null; changes: (() => void) | null } = { stop: null, changes: null };
    let announced = 0;
    let changed = 0;
    try {
      // Null until the listening connection is up.
      expect(await waitFor(() => (watch.stop ??= store.watchAnnouncements!(() => announced++)) !== null, 5_000)).to.equal(true);
      expect(await waitFor(() => (watch.changes ??= store.watchChanges!(() => changed++)) !== null, 5_000)).to.equal(true);
      await waitFor(() => heard.length > 0, 5_000);
      heard.length = 0;
      const changes: [string, () => Promise<unknown>][] = [
        ['rule publish', () => store.rules.publish({ scope: 'ACCTNOTE', destination: 'webhook', document: { destination: 'webhook', rules: [] }, author: 't', message: 'm' }, Date.now())],
        ['destination add', () => store.destinations.add({ id: 'dst_00000000000000n2', scriptId: 'ACCTNOTE', type: 'webhook', name: 'w2', enabled: true, settings: {} })],
        ['destination update', () => store.destinations.update('ACCTNOTE', DEST, { name: 'renamed' })],
        ['destination removal', () => store.destinations.remove('ACCTNOTE', 'dst_00000000000000n2')],
      ];
      for (const [what, change] of changes) {
        const before = announced;
        await change();
        expect(await waitFor(() => announced > before && changed > before, 5_000), what).to.equal(true);
      }
      // An event reaches both: the watcher, and the work listener as events.
      const before = announced;
      await store.events.append([event('d', 'accepted')]);
      expect(await waitFor(() => announced > before && heard.length > 0, 5_000)).to.equal(true);
      expect(heard, 'changes are no work').to.deep.equal(['events']);
      expect(changed, 'the changes connection hears no intake commit').to.equal(changes.length);
      // The listening connection ended by the server: the watcher is told.
      const lost = announced;
      const admin = new pg.Client({ connectionString: harness.database!.url });
      await admin.connect();
      try {
        await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN ${WORK_CHANNEL};%'`);
      } finally {
        await admin.end();
      }
      expect(await waitFor(() => announced > lost, 5_000), 'the loss announced').to.equal(true);
    } finally {
      watch.stop?.();
      watch.changes?.();
      stopWork();
    }
  });
});
