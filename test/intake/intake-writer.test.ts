import { expect } from 'chai';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { createIntakeFeed, type IntakeMessage } from '../../src/intake/intake-feed.ts';
import { createIntakeWriter } from '../../src/intake/intake-writer.ts';
import type { EventRecord } from '../../src/store/types.ts';
import { tempDir } from '../helpers/test-server.ts';

const row = (i: number): EventRecord => ({
  id: `id-${i}`, scriptId: 'ABCD1234', name: 'lead_created', eventId: `L-${i}`, status: 'accepted', source: 'event',
  requestId: `r${i}`, receivedAt: 1_700_000_000_000 + i, errors: [], warnings: [], payload: { i },
});

describe('the event writer (intake-writer.ts): commit, wake delivery, publish', () => {
  let dir: string;
  beforeEach(() => { dir = tempDir(); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('commits first, wakes delivery once per commit that accepted an event, then publishes each call\'s rows with their statuses', async () => {
    const file = join(dir, 'db.sqlite');
    const store = openSqliteStore({ file });
    const reader = new Database(file, { readonly: true });
    const stored = () => (reader.prepare('SELECT count(*) n FROM events').get() as { n: number }).n;
    const feed = createIntakeFeed();
    const seen: string[] = [];
    feed.subscribe((m: IntakeMessage) => seen.push(`publish ${m.event_id} ${m.status} (${stored()} stored)`));
    const writer = createIntakeWriter(store, { feed, wakeDelivery: () => seen.push(`wake (${stored()} stored)`) });
    // Two calls in one turn share a commit: one wake, then each call publishes its rows.
    await Promise.all([writer.write(row(1)), writer.writeMany([row(2)])]);
    await writer.write({ ...row(3), status: 'rejected' });
    await writer.write(row(1)); // the same event id again: a duplicate
    expect(seen[0]).to.equal('wake (2 stored)');
    expect(seen.slice(1, 3), 'each call publishes its own row').to.have.members(['publish L-1 accepted (2 stored)', 'publish L-2 accepted (2 stored)']);
    expect(seen.slice(3), 'a commit that accepted nothing wakes nothing').to.deep.equal(['publish L-3 rejected (3 stored)', 'publish L-1 duplicate (4 stored)']);
    reader.close();
    await writer.drain();
    await store.close();
  });
});
