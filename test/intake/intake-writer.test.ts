import { expect } from 'chai';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { createIntakeFeed, type IntakeMessage } from '../../src/intake/intake-feed.ts';
import { createIntakeWriter } from '../../src/intake/intake-writer.ts';
import type { EventRecord } from '../../src/store/types.ts';
import { tempDir } from '../helpers/test-server.ts';

/** An endpoint 1 row for the customer's event id `eventId` (tracklane's id made unique by `n`). */
function eventRow(eventId: string, n: number, status: EventRecord['status'] = 'accepted'): EventRecord {
  return {
    id: `w-${n}`, scriptId: 'ABCD1234', name: 'purchase', eventId, status, source: 'event', requestId: `req-${n}`,
    receivedAt: 1_700_000_000_000, errors: [], warnings: [], payload: { n },
  };
}

describe('the event writer (intake-writer.ts): commit, wake delivery, publish', () => {
  it('commits first, wakes delivery once per commit that accepted an event, then publishes each call\'s rows with their statuses', async () => {
    const dir = tempDir();
    const file = join(dir, 'db.sqlite');
    const store = openSqliteStore({ file });
    const reader = new Database(file, { readonly: true });
    try {
      const stored = () => (reader.prepare('SELECT count(*) n FROM events').get() as { n: number }).n;
      const feed = createIntakeFeed();
      const seen: string[] = [];
      feed.subscribe((m: IntakeMessage) => seen.push(`publish ${m.event_id} ${m.status} (${stored()} stored)`));
      const writer = createIntakeWriter(store, { feed, wakeDelivery: () => seen.push(`wake (${stored()} stored)`) });
      // Two calls in one turn share a commit: one wake, then each call publishes its rows.
      await Promise.all([writer.write(eventRow('O-1', 1)), writer.writeMany([eventRow('O-2', 2)])]);
      await writer.write(eventRow('O-3', 3, 'rejected'));
      await writer.write(eventRow('O-1', 4)); // the same event id again: a duplicate
      expect(seen[0]).to.equal('wake (2 stored)');
      expect(seen.slice(1, 3), 'each call publishes its own row').to.have.members(['publish O-1 accepted (2 stored)', 'publish O-2 accepted (2 stored)']);
      expect(seen.slice(3), 'a commit that accepted nothing wakes nothing').to.deep.equal(['publish O-3 rejected (3 stored)', 'publish O-1 duplicate (4 stored)']);
      await writer.drain();
    } finally {
      reader.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
