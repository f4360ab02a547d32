// Three real server processes on one PostgreSQL: intake spread across them, one killed
// with kill -9 mid-run and restarted. Every acknowledged event reaches the webhook double;
// no delivery is sent by two instances except what the killed one may have had in flight;
// the attempt log agrees with the double; the shared scheduled job runs once per slot.
import { expect } from 'chai';
import pg from 'pg';
import { hostname } from 'node:os';
import { spawnServer, type SpawnedServer } from '../helpers/spawn-server.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { seedPgShop } from './pg-shop.ts';
import { waitFor } from '../helpers/test-server.ts';
import { createTestDatabase, requirePostgres, type TestDatabase } from '../helpers/postgres.ts';

const TOTAL = 240;

describe('process: three instances on one PostgreSQL, one killed with -9', function () {
  this.timeout(120_000);
  let db: TestDatabase | undefined;
  let hook: DestinationDouble | undefined;
  const servers: SpawnedServer[] = [];
  const outputs: string[] = [];

  before(async function () {
    await requirePostgres(this);
  });
  after(async () => {
    for (const s of servers) {
      if (s.child.exitCode === null && s.child.signalCode === null) {
        s.child.kill('SIGTERM');
        await s.exited;
      }
    }
    await hook?.close();
    await db?.drop();
  });

  it('delivers every acknowledged event, sends no delivery twice outside the killed instance\'s in-flight work, and runs each cron slot once', async () => {
    db = await createTestDatabase();
    hook = await startDestinationDouble();
    const shop = await seedPgShop(db.url, hook.url, 'Cluster');

    const env = { DATABASE_URL: db.url, ALLOW_PRIVATE_DESTINATIONS: '1', WORKERS: '1', TRACKLANE_CRON: JSON.stringify({ leases: '* * * * * *' }) };
    const start = async () => {
      const s = await spawnServer(env, 30_000);
      servers.push(s);
      return s;
    };
    const live = await Promise.all([start(), start(), start()]);
    const acked = new Set<string>();
    let next = 0;
    let killedAt = 0;
    let killed: SpawnedServer | undefined;
    const heldByKilled = new Set<string>();
    /** As a client behind a load balancer: a refused or failed request is tried on the next instance. */
    const send = async (first: number, id: string) => {
      for (let k = 0; k < 3; k++) {
        const s = live[(first + k) % live.length];
        try {
          const r = await shop.send(s.url, id);
          if (r.status === 200) return void acked.add(id);
        } catch {
          // the killed instance: not acknowledged there, so try the next
        }
      }
    };
    // Eight clients, round robin over the instances that are up.
    const client = async () => {
      while (next < TOTAL) {
        const i = next++;
        if (i === TOTAL / 3 && killedAt === 0) {
          killedAt = Date.now();
          const pid = live[1].child.pid;
          killed = live[1];
          live[1].child.kill('SIGKILL');
          await live[1].exited;
          // What it held when it died: the only deliveries another instance may send again.
          const c = new pg.Client({ connectionString: db!.url });
          await c.connect();
          const { rows } = await c.query<{ event_id: string }>('SELECT event_id FROM deliveries WHERE lease_owner LIKE $1', [`${hostname()}/${pid}/%`]);
          await c.end();
          for (const r of rows) heldByKilled.add(r.event_id);
          live.splice(1, 1, await start()); // restarted on the same host: it recovers the dead process's leases
        }
        await send(i, `C-${i}`);
      }
    };
    await Promise.all(Array.from({ length: 8 }, client));
    expect(acked.size, 'every request acknowledged by some instance').to.equal(TOTAL);

    const received = () => new Map<string, number[]>(hook!.requests.reduce((m, r) => {
      const id = r.json().id as string;
      m.set(id, [...(m.get(id) ?? []), r.at]);
      return m;
    }, new Map<string, number[]>()));
    await hook.waitFor(() => [...acked].every((id) => received().has(id)), 60_000, 'every acknowledged event delivered');

    // Sent twice only if the killed instance held it (leased, maybe sent, not recorded) when it died.
    const twice = [...received()].filter(([, at]) => at.length > 1);
    for (const [id] of twice) expect(heldByKilled.has(id), `${id} sent twice but not held by the killed instance`).to.equal(true);

    // The attempt log agrees: one successful attempt per delivered delivery, as many as the double saw once each.
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const counts = async () => (await c.query<{ delivered: number; pending: number }>(
        // Delivered: the rows that say so and the deliveries an attempt lists (delivered by their first attempt, no row).
        `SELECT (SELECT count(*) FROM deliveries WHERE status = 'delivered')::int + (SELECT count(*) FROM delivery_attempts a,
            jsonb_array_elements(a.delivered::jsonb) j WHERE a.delivered IS NOT NULL AND jsonb_typeof(j) = 'array')::int AS delivered,
          (SELECT count(*) FROM deliveries WHERE status = 'pending')::int AS pending`)).rows[0];
      // An attempt is recorded a few milliseconds after the double received its request.
      expect(await waitFor(async () => (await counts()).pending === 0, 10_000), 'every attempt recorded').to.equal(true);
      const d = await counts();
      expect(d.delivered).to.be.at.least(acked.size);
      const { rows: [a] } = await c.query<{ n: number }>("SELECT count(*)::int AS n FROM delivery_attempts WHERE outcome = 'success'");
      expect(a.n, 'successful attempts recorded vs. requests received').to.be.at.most(hook.requests.length);
      expect(hook.requests.length - a.n, 'requests without a record: only in-flight work of the killed instance').to.be.at.most(twice.length + 8);
      // Each scheduled slot ran on exactly one instance (the key of job_runs) and ran at all.
      const jobRuns = async () => (await c.query<{ slot: number; owner: string }>("SELECT slot, owner FROM job_runs WHERE job = 'leases' ORDER BY slot")).rows;
      // The job runs every second: a quick run of the load above may end before its third slot.
      expect(await waitFor(async () => (await jobRuns()).length > 2, 10_000), 'the leases job ran').to.equal(true);
      // A run the killed instance claimed may lack its log line (kill -9 between the claim's
      // commit and the line reaching stdout); every other instance logs each run it claimed,
      // a moment after the claim commits (and slots keep coming), so the two are compared
      // once the log has caught up.
      const loggedBy = (s: SpawnedServer) => (s.output().match(/"job":"leases"[^\n]*scheduled job claimed and running/g) ?? []).length;
      const byKilled = (owner: string) => owner === `${hostname()}/${killed!.child.pid}` || owner.startsWith(`${hostname()}/${killed!.child.pid}/`);
      const survivorsLogged = () => servers.filter((s) => s !== killed).map(loggedBy).reduce((x, y) => x + y, 0);
      let runs = await jobRuns();
      let logged = -1;
      await waitFor(async () => {
        runs = await jobRuns();
        logged = survivorsLogged();
        return logged === runs.filter((r) => !byKilled(r.owner)).length;
      }, 5_000);
      expect(logged, 'runs logged by the live instances = slots they claimed (none ran twice)').to.equal(runs.filter((r) => !byKilled(r.owner)).length);
      expect(loggedBy(killed!), 'the killed instance logged no run it did not claim').to.be.at.most(runs.filter((r) => byKilled(r.owner)).length);
      expect(new Set(runs.map((r) => r.owner)).size, 'runs spread over instances').to.be.greaterThan(0);
    } finally {
      await c.end();
    }
    outputs.push(...servers.map((s) => s.output()));
  });
});
