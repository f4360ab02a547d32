// Delivery on PostgreSQL, idle, with its announcements heard: its slowed ticks are quiet (no
// query from the fan-out, the lanes, the destinations' or the rule revision's re-reads, nor
// from the stats roll-up on its own timer), and what is announced, what comes due and what the
// polls must find once the listening connection is lost is still delivered. Run in this
// process as the delivery thread runs it (startDelivery, a rule watcher on the store,
// slowWhenIdle with the store's announcements), its queries counted by the application name
// its connections carry; another store handle on the same database stands for another
// instance. No wait below is timed: the quiet window is counted in ticks, and work is awaited.
import { expect } from 'chai';
import pg from 'pg';
import { loadConfig } from '../../src/config.ts';
import { startDelivery, type DeliveryRuntime } from '../../src/delivery/start-delivery.ts';
import { createRetryPolicy } from '../../src/delivery/retry-policy.ts';
import { atNextTick, slowWhenIdle, stopSlowing, tickPeriod } from '../../src/poll-tick.ts';
import { startRuleWatcher, type RuleWatcher } from '../../src/rules/rule-watcher.ts';
import { openPostgresStore, type PgStore } from '../../src/store/postgres/pg-store.ts';
import { WORK_CHANNEL } from '../../src/store/postgres/notify.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { adminQuery, createTestDatabase, requirePostgres, type TestDatabase } from '../helpers/postgres.ts';
import { shippedFolders } from '../helpers/shipped-folders.ts';
import { waitFor } from '../helpers/test-server.ts';
import { checkout, createFixture, type Fixture } from './delivery-fixture.ts';

/** The application name of the connections under test (the other instance's carry none). */
const UNDER_TEST = 'tl_quiet_ticks';
/** The slowed tick here: two seconds, after two quiet ticks; the safety read far beyond the test. */
const IDLE = { idleTickMs: 2_000, idleAfterTicks: 2, heardPollMs: 3_600_000 };
/** A retry recorded before a restart comes due this long after its first attempt: well after the tick slows. */
const RETRY_MS = 9_000;
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };

/** Statements sent on the connections under test so far. */
let queries = 0;
const clientQuery = pg.Client.prototype.query;

/** The next tick of this thread. */
const nextTick = () => new Promise<void>((r) => atNextTick(() => r()));

describe('delivery on PostgreSQL: quiet slowed ticks', function () {
  this.timeout(120_000);
  const t: { db?: TestDatabase; hook?: DestinationDouble; other?: Fixture; store?: PgStore; rules?: RuleWatcher; delivery?: DeliveryRuntime } = {};
  let scriptId = '';

  const start = async () => {
    t.delivery = await startDelivery({
      config: loadConfig({ ALLOW_PRIVATE_DESTINATIONS: '1' }), store: t.store!, plugins: t.other!.plugins, rules: t.rules!, pool: null, logger: silent,
      overrides: {
        clock: Date.now, schedule: createRetryPolicy({ scheduleMs: [RETRY_MS], random: () => 0.5 }), lingerMs: 0,
        // The stats roll-up every second (every tick), the others out of the window.
        cron: { retention: '0 0 1 1 *', dedup: '0 0 1 1 *', leases: '0 0 1 1 *' }, rollUpMs: 1_000,
      },
    });
  };

  /** Waits until the tick has slowed, then for one more slowed tick (what ran before it is done). */
  const slowed = async () => {
    expect(await waitFor(() => tickPeriod() === IDLE.idleTickMs, 30_000), 'the tick slowed').to.equal(true);
    await nextTick();
  };

  before(async function () {
    await requirePostgres(this);
    const db = (t.db = await createTestDatabase());
    t.hook = await startDestinationDouble();
    const other = (t.other = await createFixture({ open: () => openPostgresStore({ url: db.url }) }));
    scriptId = await other.account();
    await other.destination(scriptId, 'webhook', t.hook.url);
    const url = new URL(db.url);
    url.searchParams.set('application_name', UNDER_TEST);
    pg.Client.prototype.query = function (this: pg.Client & { connectionParameters?: { application_name?: string } }, ...args: unknown[]) {
      if (this.connectionParameters?.application_name === UNDER_TEST) queries++;
      return (clientQuery as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof clientQuery;
    const store = (t.store = await openPostgresStore({ url: url.toString(), migrate: 'existing' }));
    const rules = (t.rules = startRuleWatcher({ dir: shippedFolders().rulesDir, logger: silent, store: store.rules }));
    await rules.ready;
    await start();
    slowWhenIdle({ announcer: store.watchAnnouncements!.bind(store), ...IDLE, logger: silent });
  });

  after(async () => {
    stopSlowing();
    pg.Client.prototype.query = clientQuery;
    if (t.db) await adminQuery(`ALTER DATABASE "${t.db.name}" ALLOW_CONNECTIONS true`).catch(() => undefined);
    await t.delivery?.stop(500);
    t.rules?.close();
    await t.store?.close();
    await t.other?.close();
    await t.hook?.close();
    await t.db?.drop();
  });

  it('runs no query on its slowed ticks while nothing is announced', async () => {
    await slowed();
    const before = queries;
    for (let i = 0; i < 3; i++) await nextTick();
    expect(tickPeriod(), 'still slowed').to.equal(IDLE.idleTickMs);
    expect(queries - before, 'queries over three quiet ticks (six seconds, six roll-ups)').to.equal(0);
  });

  it('delivers an event another instance accepted as soon as it is announced', async () => {
    // Answered 500: a retry is recorded, due RETRY_MS later (the next test).
    t.hook!.script({ status: 500 });
    await t.other!.ingest(scriptId, checkout('quiet-announced'));
    expect(await waitFor(() => t.hook!.requests.length >= 1, 20_000), 'the announced event sent').to.equal(true);
  });

  it('sends a retry recorded before a restart when it comes due, though its tick slowed', async () => {
    // Recorded, then the delivery restarts: its new lane did not record the retry, only the store knows when it is due.
    expect(await waitFor(async () => (await pendingRetries(t.db!.url)) === 1, 20_000), 'the retry recorded').to.equal(true);
    await t.delivery!.stop(500);
    await start();
    await slowed();
    expect(await waitFor(() => t.hook!.requests.length >= 2, 40_000), 'the retry sent when due').to.equal(true);
  });

  it('finds what no announcement told once the listening connection is lost, polling every second', async () => {
    await slowed();
    const sent = t.hook!.requests.length;
    await t.other!.store.ping(); // the other instance's pool keeps a connection for its event below
    await t.store!.ping(); // and ours for its polls
    await adminQuery(`ALTER DATABASE "${t.db!.name}" ALLOW_CONNECTIONS false`);
    const { rows } = await adminQuery(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = $2 AND query LIKE 'LISTEN ${WORK_CHANNEL};%'`,
      [t.db!.name, UNDER_TEST]);
    expect(rows, 'one listening connection').to.have.length(1);
    await adminQuery('SELECT pg_terminate_backend($1)', [rows[0].pid]);
    expect(await waitFor(() => tickPeriod() === 1_000, 20_000), 'the lost connection brought the second back').to.equal(true);
    await t.other!.ingest(scriptId, checkout('quiet-unheard'));
    expect(await waitFor(() => t.hook!.requests.length > sent, 20_000), 'the unannounced event found and sent').to.equal(true);
  });
});

/** Pending deliveries that have had one attempt (a retry waiting for its time). */
async function pendingRetries(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(`SELECT count(*)::int AS n FROM deliveries WHERE status = 'pending' AND attempts = 1`)).rows[0].n as number;
  } finally {
    await c.end();
  }
}
