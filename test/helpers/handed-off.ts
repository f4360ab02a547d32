// Store-level delivery fixtures: events fanned out with their deliveries handed to a lane (no
// rows yet: what their attempt records write), and the statements a PostgreSQL store's pool
// runs meanwhile (a group commit's cost, counted).
import type { StoredItem, UnstoredRow } from '../../src/store/delivery-contract.ts';
import type { PgStore } from '../../src/store/postgres/pg-store.ts';
import type { Store } from '../../src/store/types.ts';

/** A mapped native event for `eventId`, received at `receivedAt`. */
export const storedItem = (eventId: string, receivedAt: number): StoredItem => ({
  native: { rule: 'r', fields: {} } as never, eventId, identifiers: {}, attribution: {}, receivedAt,
});

/**
 * `n` events of `scriptId` (ids e-0…, event ids L-0…) fanned out under `claim` at `at`, one
 * delivery each to `destinationId` (a webhook) handed to a lane: the rows their records write.
 */
export async function handOff(store: Store, n: number, claim: string, o: { scriptId: string; destinationId: string; at: number }): Promise<UnstoredRow[]> {
  await store.events.append(Array.from({ length: n }, (_, i) => ({
    id: `e-${i}`, scriptId: o.scriptId, name: 'lead_created', eventId: `L-${i}`, status: 'accepted' as const,
    source: 'event', requestId: 'r', receivedAt: o.at, errors: [], warnings: [], payload: {},
  })));
  const claimed = await store.deliveries.claimEvents(claim, o.at, 60_000, 100);
  await store.deliveries.completeFanOut(claim, o.at, claimed.map((e) => ({ seq: e.seq, scriptId: o.scriptId, eventId: e.event.eventId, receivedAt: o.at,
    deliveries: [{ destinationId: o.destinationId, destinationType: 'webhook', status: 'pending' as const, item: storedItem(e.event.eventId!, o.at), part: 0, handoff: true }] })));
  return claimed.map((e) => ({ eventSeq: e.seq, scriptId: o.scriptId, destinationId: o.destinationId, destinationType: 'webhook', eventId: e.event.eventId,
    receivedAt: o.at, part: 0, item: storedItem(e.event.eventId!, o.at) }));
}

/** Runs `fn`, counting the statements run on clients of `store`'s pool meanwhile; resolves with the count. */
export async function countStatements(store: PgStore, fn: () => Promise<unknown>): Promise<number> {
  const pool = store.pool;
  const connect = pool.connect.bind(pool);
  let n = 0;
  (pool as { connect: unknown }).connect = async () => {
    const client = await connect();
    const query = client.query.bind(client) as (...a: unknown[]) => unknown;
    (client as { query: unknown }).query = (...a: unknown[]) => (n++, query(...a));
    client.release = ((release) => (err?: boolean | Error) => {
      (client as { query: unknown }).query = query;
      return release(err);
    })(client.release.bind(client));
    return client;
  };
  try {
    await fn();
  } finally {
    (pool as { connect: unknown }).connect = connect;
  }
  return n;
}
