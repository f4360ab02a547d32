// The database goes away under a running instance (its connections are terminated and new
// ones refused), then comes back: intake answers 503 + Retry-After meanwhile (never a 2xx
// without a commit), /readyz says not ready, the instance recovers on its own within
// seconds, and every acknowledged event is delivered exactly once.
import { expect } from 'chai';
import pg from 'pg';
import { spawnServer, type SpawnedServer } from '../helpers/spawn-server.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { waitFor } from '../helpers/test-server.ts';
import { seedPgShop } from './pg-shop.ts';
import { createTestDatabase, PG_ADMIN_URL, requirePostgres, type TestDatabase } from '../helpers/postgres.ts';

describe('process: PostgreSQL outage under a running instance', function () {
  this.timeout(90_000);
  let db: TestDatabase | undefined;
  let hook: DestinationDouble | undefined;
  let server: SpawnedServer | undefined;
  let admin: pg.Client | undefined;

  before(async function () {
    await requirePostgres(this);
  });
  after(async () => {
    if (db && admin) await admin.query(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`).catch(() => undefined);
    await admin?.end();
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await hook?.close();
    await db?.drop();
  });

  it('503 + Retry-After and /readyz 503 while it is down; back on its own; each acknowledged event delivered once', async () => {
    db = await createTestDatabase();
    hook = await startDestinationDouble();
    const shop = await seedPgShop(db.url, hook.url, 'Outage');
    server = await spawnServer({ DATABASE_URL: db.url, ALLOW_PRIVATE_DESTINATIONS: '1', WORKERS: '1' }, 30_000);
    const s = server;
    const acked: string[] = [];
    const send = async (id: string) => {
      const r = await shop.send(s.url, id);
      if (r.status === 200) acked.push(id);
      return r;
    };
    for (let i = 0; i < 10; i++) expect((await send(`B-${i}`)).status).to.equal(200);

    admin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    await admin.query(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS false`);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [db.name]);

    const during: number[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await send(`D-${i}`);
      during.push(r.status);
      if (r.status === 503) expect(Number(r.headers.get('retry-after'))).to.be.at.least(1);
    }
    expect(during.every((st) => st === 503), `statuses while down: ${during.join(',')}`).to.equal(true);
    expect((await fetch(`${s.url}/readyz`)).status).to.equal(503);
    expect((await fetch(`${s.url}/healthz`)).status, 'the process itself is fine').to.equal(200);

    await admin.query(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`);
    const back = Date.now();
    expect(await waitFor(async () => (await fetch(`${s.url}/readyz`)).status === 200, 15_000, 200), 'ready again').to.equal(true);
    expect(await waitFor(async () => (await send(`A-${Date.now()}`)).status === 200, 15_000, 200), 'intake again').to.equal(true);
    expect(Date.now() - back, 'recovered within seconds').to.be.below(15_000);
    for (let i = 0; i < 10; i++) expect((await send(`A-${i}`)).status).to.equal(200);

    try {
      await hook.waitFor(() => acked.every((id) => hook!.requests.some((r) => r.json().id === id)), 30_000, 'every acknowledged event delivered');
    } catch (err) {
      const got = new Set(hook.requests.map((r) => r.json().id as string));
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      const q = await c.query('SELECT event_seq, lease_owner, lease_until FROM dispatch_queue');
      const d = await c.query("SELECT event_id, status, lease_owner, lease_until, next_attempt_at, attempts FROM deliveries WHERE status <> 'delivered'");
      await c.end();
      // Into the run's log, not a file: a failed test leaves nothing behind either.
      console.log('missing', acked.filter((id) => !got.has(id)), 'now', Date.now(), q.rows, d.rows, `\nserver output (end):\n${s.output().slice(-20_000)}`);
      throw err;
    }
    const counts = new Map<string, number>();
    for (const r of hook.requests) counts.set(r.json().id, (counts.get(r.json().id) ?? 0) + 1);
    expect([...counts].filter(([, n]) => n > 1), 'none delivered twice').to.deep.equal([]);
    expect([...counts.keys()].filter((id) => id.startsWith('D-')), 'nothing refused was delivered').to.deep.equal([]);
  });
});
