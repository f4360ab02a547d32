// An idle server process on PostgreSQL slows its delivery thread's polls (here to a minute,
// after two quiet seconds; its slowed ticks quiet, with no safety read within the test) and is
// woken at once by what another instance does on the same database (a second store handle
// here, as another instance's intake and admin): an accepted event is delivered, a rule
// publish and a destination change bring the one-second tick back (the rules are re-read); and
// with its listening connection killed and no way to reconnect, it goes back to polling every
// second and still delivers what no notification announced. Every wait is far shorter than the
// slowed tick: what is seen in time was announced.
import { expect } from 'chai';
import pg from 'pg';
import { spawnServer, type SpawnedServer } from '../helpers/spawn-server.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { waitFor } from '../helpers/test-server.ts';
import { adminQuery, createTestDatabase, requirePostgres, type TestDatabase } from '../helpers/postgres.ts';
import { openPostgresStore } from '../../src/store/postgres/pg-store.ts';
import { WORK_CHANNEL } from '../../src/store/postgres/notify.ts';
import { checkout, createFixture, type Fixture } from '../delivery/delivery-fixture.ts';

const SLOWED = 'idle: the polls tick slower until work is announced';
const WOKEN = 'work announced: the polls tick every second again';
/** Well under the slowed tick (60 s): nothing seen within it was left to the slowed polls. */
const PROMPT_MS = 20_000;

/** How many of the delivery thread's log lines contain `text` so far. */
const linesOf = (s: SpawnedServer, text: string): number => s.output().split('\n').filter((l) => l.includes('"thread":"delivery"') && l.includes(text)).length;

describe('process: an idle instance on PostgreSQL, woken by another on the same database', function () {
  this.timeout(180_000);
  /** What the test started, ended after it. */
  const t: { db?: TestDatabase; hook?: DestinationDouble; other?: Fixture; server?: SpawnedServer } = {};

  before(async function () {
    await requirePostgres(this);
  });
  after(async () => {
    if (t.db) await adminQuery(`ALTER DATABASE "${t.db.name}" ALLOW_CONNECTIONS true`).catch(() => undefined);
    if (t.server && t.server.child.exitCode === null && t.server.child.signalCode === null) {
      t.server.child.kill('SIGTERM');
      await t.server.exited;
    }
    await t.other?.close();
    await t.hook?.close();
    await t.db?.drop();
  });

  it('delivers another instance\'s event, re-reads its rule publish and destination change at once, and polls every second while it cannot listen', async () => {
    const db = (t.db = await createTestDatabase());
    const hook = (t.hook = await startDestinationDouble());
    const f = (t.other = await createFixture({ open: () => openPostgresStore({ url: db.url }) }));
    const scriptId = await f.account();
    const dest = await f.destination(scriptId, 'webhook', hook.url);
    const s = (t.server = await spawnServer({
      DATABASE_URL: db.url, ALLOW_PRIVATE_DESTINATIONS: '1', WORKERS: '1', LOG_LEVEL: 'debug',
      TRACKLANE_IDLE_TICK: JSON.stringify({ idleTickMs: 60_000, idleAfterTicks: 2, heardPollMs: 3_600_000 }),
    }, 30_000));
    const slowedAgain = async (what: string) => {
      const n = linesOf(s, SLOWED);
      expect(await waitFor(() => linesOf(s, SLOWED) > n, 30_000), `${what}: slowed again\n${s.output()}`).to.equal(true);
    };
    expect(await waitFor(() => linesOf(s, SLOWED) >= 1, 30_000), `idle: slowed\n${s.output()}`).to.equal(true);

    // An event the other instance accepted.
    await f.ingest(scriptId, checkout('wake-by-event'));
    expect(await waitFor(() => hook.requests.length >= 1, PROMPT_MS), 'the other\'s event delivered').to.equal(true);
    await slowedAgain('after the event');

    // A rule publish: the delivery thread reads the new revision.
    await f.store.rules.publish({ scope: scriptId, destination: 'webhook', document: { destination: 'webhook', rules: [] }, author: 'test', message: 'wake' }, Date.now());
    const revision = await f.store.rules.revision();
    expect(await waitFor(() => linesOf(s, `"revision":${revision}`) >= 1, PROMPT_MS), `the publish read\n${s.output()}`).to.equal(true);
    await slowedAgain('after the publish');

    // A destination change.
    const woken = linesOf(s, WOKEN);
    await f.store.destinations.update(scriptId, dest.id, { name: 'renamed' });
    expect(await waitFor(() => linesOf(s, WOKEN) > woken, PROMPT_MS), 'the change woke the tick').to.equal(true);
    await slowedAgain('after the destination change');

    // The listening connection killed, and no new connection let in: back on the second at once.
    await f.store.ping(); // the other's pool keeps an open connection for the event below
    await adminQuery(`ALTER DATABASE "${db.name}" ALLOW_CONNECTIONS false`);
    const listening = `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN ${WORK_CHANNEL};%'`;
    const { rows } = await adminQuery(listening, [db.name]);
    expect(rows, 'one listening connection').to.have.length(1);
    const lost = linesOf(s, WOKEN);
    await adminQuery('SELECT pg_terminate_backend($1)', [rows[0].pid]);
    expect(await waitFor(() => linesOf(s, WOKEN) > lost, PROMPT_MS), 'the lost connection brought the second back').to.equal(true);
    // Its notification goes nowhere: the polls find it.
    await f.ingest(scriptId, checkout('found-by-polling'));
    expect(await waitFor(() => hook.requests.length >= 2, PROMPT_MS), `delivered while not listening\n${s.output()}`).to.equal(true);
    // Connections let in again: it listens again, and slows again once idle.
    await adminQuery(`ALTER DATABASE "${db.name}" ALLOW_CONNECTIONS true`);
    expect(await waitFor(async () => (await adminQuery(listening, [db.name])).rows.length === 1, 30_000), 'listening again').to.equal(true);
    await slowedAgain('listening again');
  });
});
