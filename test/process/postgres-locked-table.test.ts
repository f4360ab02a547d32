// Another session holds the events table in ACCESS EXCLUSIVE mode under a running instance:
// intake gives up after its lock timeout with 503 + Retry-After (as SQLite mode does) instead
// of waiting as long as the lock lasts, stores nothing of the refused event, /readyz says not
// ready while intake cannot take the lock, and once the lock goes the same event is accepted.
import { expect } from 'chai';
import pg from 'pg';
import { spawnServer, type SpawnedServer } from '../helpers/spawn-server.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { waitFor } from '../helpers/test-server.ts';
import { seedPgShop } from './pg-shop.ts';
import { createTestDatabase, requirePostgres, type TestDatabase } from '../helpers/postgres.ts';

/** How long the other session holds the lock at most: far past intake's limit, as in the report. */
const HOLD_MS = 10_000;

describe('process: PostgreSQL events table locked by another session', function () {
  this.timeout(90_000);
  let db: TestDatabase | undefined;
  let hook: DestinationDouble | undefined;
  let server: SpawnedServer | undefined;
  let locker: pg.Client | undefined;

  before(async function () {
    await requirePostgres(this);
  });
  after(async () => {
    await locker?.end().catch(() => undefined);
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await hook?.close();
    await db?.drop();
  });

  it('answers 503 + Retry-After, stores nothing, says not ready; accepts the same event after the lock', async () => {
    db = await createTestDatabase();
    hook = await startDestinationDouble();
    const shop = await seedPgShop(db.url, hook.url, 'Locked table');
    server = await spawnServer({ DATABASE_URL: db.url, ALLOW_PRIVATE_DESTINATIONS: '1', WORKERS: '1' }, 30_000);
    const s = server;
    expect((await shop.send(s.url, 'B-1')).status).to.equal(200);
    await hook.waitFor(() => hook!.requests.length === 1, 15_000, 'delivery works before the lock');
    expect((await fetch(`${s.url}/readyz`)).status).to.equal(200);

    const c = new pg.Client({ connectionString: db.url });
    locker = c;
    await c.connect();
    await c.query('BEGIN');
    await c.query('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      await c.query('COMMIT');
    };
    // The report's scenario: the lock lasts 10 s at most. An intake that waits for it would
    // answer 200 once it ends; one with a lock limit answers 503 long before.
    const holdTimer = setTimeout(() => void release(), HOLD_MS);
    let refused: Response;
    let readyWhileLocked: { status: number; body: { status: string; reason?: string } };
    try {
      refused = await shop.send(s.url, 'L-LOCKED');
      const r = await fetch(`${s.url}/readyz`);
      readyWhileLocked = { status: r.status, body: await r.json() as { status: string; reason?: string } };
      expect((await fetch(`${s.url}/healthz`)).status, 'the process itself is fine').to.equal(200);
    } finally {
      clearTimeout(holdTimer);
      await release();
    }
    expect(refused.status, 'refused while the table is locked, not accepted once it was released').to.equal(503);
    expect(Number(refused.headers.get('retry-after'))).to.be.at.least(1);
    expect(await refused.text()).to.contain('UNAVAILABLE');
    expect(readyWhileLocked.status, '/readyz while intake cannot take the lock').to.equal(503);
    expect(readyWhileLocked.body.status).to.equal('not ready');
    expect(readyWhileLocked.body.reason).to.match(/lock/);

    // Nothing of the refused event was stored: no event row, no dedup claim.
    const stored = await c.query("SELECT count(*)::int AS n FROM events WHERE event_id = 'L-LOCKED'");
    const claims = await c.query("SELECT count(*)::int AS n FROM dedup_keys WHERE event_id = 'L-LOCKED'");
    expect([stored.rows[0].n, claims.rows[0].n], 'nothing half-stored').to.deep.equal([0, 0]);

    expect(await waitFor(async () => (await fetch(`${s.url}/readyz`)).status === 200, 15_000, 100), 'ready again after the lock').to.equal(true);
    const again = await shop.send(s.url, 'L-LOCKED');
    expect(again.status).to.equal(200);
    const after = await c.query("SELECT status FROM events WHERE event_id = 'L-LOCKED'");
    expect(after.rows.map((r) => r.status), 'the retry is stored as accepted, not as a duplicate').to.deep.equal(['accepted']);
    await hook.waitFor(() => hook!.requests.some((r) => r.json().id === 'L-LOCKED'), 15_000, 'the retried event is delivered');
    expect(hook.requests.filter((r) => r.json().id === 'L-LOCKED')).to.have.length(1);
  });
});
