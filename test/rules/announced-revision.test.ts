// The rule watcher on PostgreSQL with the store's announcements of rule publishes (the HTTP
// thread's, src/server.ts): while they are heard it reads no revision on its ticks and serves
// another instance's publish at once; with the listening connection gone it reads the revision
// every second again until it hears them again.
import { expect } from 'chai';
import pg from 'pg';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openPostgresStore } from '../../src/store/postgres/pg-store.ts';
import { CHANGES_CHANNEL } from '../../src/store/postgres/notify.ts';
import type { Store } from '../../src/store/types.ts';
import type { RuleFile } from '../../src/rules/types.ts';
import { startRuleWatcher } from '../../src/rules/rule-watcher.ts';
import { every, TICK_MS } from '../../src/poll-tick.ts';
import { tempDir, waitFor } from '../helpers/test-server.ts';
import { createTestDatabase, requirePostgres, type TestDatabase } from '../helpers/postgres.ts';

const ga4 = (name: string): RuleFile => ({ destination: 'ga4', rules: [{ id: 'ga4.page', event: '*', output: { name } }] });
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe('rule watcher (PostgreSQL): the revision read when a publish is announced', function () {
  this.timeout(60_000);
  let db: TestDatabase | undefined;
  const stores: Store[] = [];
  const stops: (() => void)[] = [];
  let dir = '';

  before(async function () {
    await requirePostgres(this);
    db = await createTestDatabase();
    dir = tempDir('tl-rules-');
    writeFileSync(join(dir, 'ga4.json'), JSON.stringify(ga4('file')));
  });
  after(async () => {
    for (const stop of stops) stop();
    for (const s of stores) await s.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads no revision while it hears announcements, serves another instance\'s publish at once, and reads every second while it cannot hear', async () => {
    const [mine, other] = [await openPostgresStore({ url: db!.url }), await openPostgresStore({ url: db!.url })];
    stores.push(mine, other);
    let reads = 0;
    const counted = { live: () => mine.rules.live(), revision: () => ((reads++), mine.rules.revision()) };
    let ticks = 0;
    stops.push(every(TICK_MS, () => ticks++));
    const w = startRuleWatcher({ dir, logger: silent, displayBase: dir, store: counted, watch: false, announcer: mine.watchChanges!.bind(mine) });
    stops.push(() => w.close());
    await w.ready;
    /** Three ticks in a row without a revision read. */
    const quiet = () => waitFor(async () => {
      const [r, t] = [reads, ticks];
      await waitFor(() => ticks >= t + 3, 10_000);
      return reads === r;
    }, 30_000, 0);
    expect(await quiet(), 'no reads while heard').to.equal(true);

    await other.rules.publish({ scope: 'default', destination: 'ga4', document: ga4('announced'), author: 't', message: '' }, Date.now());
    expect(await waitFor(() => w.current().rulesFor('X', 'ga4')[0]?.output.name === 'announced', 5_000), 'the publish served').to.equal(true);

    const admin = new pg.Client({ connectionString: db!.url });
    await admin.connect();
    try {
      const r = await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN ${CHANGES_CHANNEL}'`);
      expect(r.rowCount, 'one listening connection').to.equal(1);
    } finally {
      await admin.end();
    }
    const lostAt = reads;
    // At least every other tick: the connection may be back (and the reads stop) soon.
    expect(await waitFor(() => reads >= lostAt + 1, 5_000), 'read again once not heard').to.equal(true);
    expect(await quiet(), 'heard again: no reads').to.equal(true);
  });
});
