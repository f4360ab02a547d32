// PostgreSQL: another session holds accounts or access_tokens in ACCESS EXCLUSIVE mode (a
// LOCK TABLE, a long ALTER). An intake request whose credentials are not cached answers 503
// + Retry-After after intake's lock timeout, instead of waiting as long as the lock lasts,
// and /readyz says not ready, naming the credential check; once the lock goes both recover.
import { expect } from 'chai';
import pg from 'pg';
import { rmSync } from 'node:fs';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { startServer, type Running } from '../../src/server.ts';
import { createAccountService } from '../../src/accounts/account-service.ts';
import { accountMaker, poster, tempDir, waitFor } from '../helpers/test-server.ts';
import { shippedFolderEnv } from '../helpers/shipped-folders.ts';
import { createTestDatabase, requirePostgres, type TestDatabase } from '../helpers/postgres.ts';

/**
 * The other session releases the lock after this long at most. An intake that waits for the
 * lock answers 200 once it is released, so a 503 shows the request gave up on its own; it is
 * also far below the pool's 15 s query timeout, which used to be the only bound.
 */
const HOLD_MS = 8_000;

const LEAD = { event: { name: 'lead_created', id: 'L-1' }, context: { environment: 'prod', data_source: 'crm', url: 'https://shop.example/' } };

describe('PostgreSQL: accounts or access_tokens locked by another session', function () {
  this.timeout(60_000);
  let db: TestDatabase | undefined;
  let running: Running | undefined;
  let dataDir: string | undefined;

  before(async function () {
    await requirePostgres(this);
    db = await createTestDatabase();
    dataDir = tempDir();
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: db.url, LOG_LEVEL: 'silent', DELIVERY_THREAD: '0', ...shippedFolderEnv() });
    running = await startServer(config, { logger: createLogger('silent') });
  });
  after(async () => {
    await running?.close(500);
    await db?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  for (const table of ['accounts', 'access_tokens']) {
    it(`${table}: intake answers 503 within its lock timeout, /readyz says not ready; both recover after the lock`, async () => {
      const r = running!;
      // A new account: its credentials are not in the authenticator's cache.
      const shop = await accountMaker(createAccountService(r.store))();
      const post = poster(r.url);
      expect((await fetch(`${r.url}/readyz`)).status, 'ready before the lock').to.equal(200);

      const locker = new pg.Client({ connectionString: db!.url });
      await locker.connect();
      let released = false;
      const release = async () => {
        if (released) return;
        released = true;
        await locker.query('COMMIT');
      };
      let refused: Awaited<ReturnType<typeof post>>;
      let tookMs: number;
      let ready: { status: number; body: { status: string; reason?: string } };
      try {
        await locker.query('BEGIN');
        await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
        const holdTimer = setTimeout(() => void release(), HOLD_MS);
        try {
          const t0 = Date.now();
          refused = await post('/webhooks/service/event', LEAD, { account: shop });
          tookMs = Date.now() - t0;
          const res = await fetch(`${r.url}/readyz`);
          ready = { status: res.status, body: await res.json() as typeof ready.body };
          expect((await fetch(`${r.url}/healthz`)).status, 'the process itself is fine').to.equal(200);
        } finally {
          clearTimeout(holdTimer);
          await release();
        }
      } finally {
        await locker.end();
      }
      expect(refused.status, `answered while ${table} was locked, not once it was released`).to.equal(503);
      expect(refused.text, refused.text).to.contain('UNAVAILABLE');
      expect(Number(refused.headers.get('retry-after'))).to.be.at.least(1);
      expect(tookMs, 'a generous bound, well under the 15 s the request used to wait').to.be.below(HOLD_MS);
      expect(ready.status, '/readyz while credential checks cannot read').to.equal(503);
      expect(ready.body.status).to.equal('not ready');
      expect(ready.body.reason).to.match(/credential checks wait for a lock .*accounts, access_tokens/);

      expect(await waitFor(async () => (await fetch(`${r.url}/readyz`)).status === 200, 10_000, 100), 'ready again after the lock').to.equal(true);
      expect((await post('/webhooks/service/event', LEAD, { account: shop })).status, 'the same request after the lock').to.equal(200);
    });
  }
});
