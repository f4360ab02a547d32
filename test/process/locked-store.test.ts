// Another process holds the SQLite write lock: the event loop never waits on it. /healthz
// answers at once, intake answers 503 UNAVAILABLE with Retry-After within about a second
// (never a 200 for an event that was not stored), and once the lock is released intake
// and delivery carry on.
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { createAccountService } from '../../src/accounts/account-service.ts';
import { spawnServer, type SpawnedServer } from '../helpers/spawn-server.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { tempDir, waitFor } from '../helpers/test-server.ts';
import { SETTINGS } from '../delivery/delivery-fixture.ts';

describe('process: a database locked by another process', function () {
  this.timeout(60_000);
  let data: string;
  let server: SpawnedServer | undefined;
  let hook: DestinationDouble;
  after(async () => {
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await hook?.close();
    rmSync(data, { recursive: true, force: true });
  });

  it('healthz answers at once, intake 503 within about a second, and everything resumes after the lock', async () => {
    data = tempDir('tl-lock-');
    hook = await startDestinationDouble();
    const file = join(data, 'tracklane.db');
    const setup = openSqliteStore({ file, writerThread: false });
    const { account, accessToken } = await createAccountService(setup).create({ name: 'Locked', tier: 'FLEX', addon: true });
    await setup.destinations.add({ id: `dst_${randomBytes(8).toString('hex')}`, scriptId: account.scriptId, type: 'webhook', name: 'hook', enabled: true, settings: SETTINGS.webhook(hook.url) });
    await setup.close();
    server = await spawnServer({ DATA_DIR: data, ALLOW_PRIVATE_DESTINATIONS: '1' });
    const send = (id: string) => fetch(`${server!.url}/webhooks/service/event?id=${account.scriptId}`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-service-access-token': accessToken },
      body: JSON.stringify({ event: { name: 'lead_created', id }, context: { environment: 'prod', data_source: 'crm' } }),
    });
    expect((await send('L-BEFORE')).status).to.equal(200);
    await hook.waitFor(() => hook.requests.length === 1, 10_000, 'delivery works before the lock');

    const locker = new Database(file);
    locker.exec('BEGIN IMMEDIATE'); // holds the write lock until COMMIT
    try {
      let t = Date.now();
      expect((await fetch(`${server.url}/healthz`)).status).to.equal(200);
      expect(Date.now() - t, '/healthz does not wait for the lock').to.be.below(1_000);
      t = Date.now();
      const refused = await send('L-LOCKED');
      const took = Date.now() - t;
      expect(refused.status).to.equal(503);
      expect(refused.headers.get('retry-after')).to.match(/^\d+$/);
      expect(await refused.text()).to.contain('UNAVAILABLE');
      expect(took, 'refused within about a second').to.be.below(3_000);
      // Still responsive while the lanes and fan-out keep failing against the lock.
      t = Date.now();
      expect((await fetch(`${server.url}/healthz`)).status).to.equal(200);
      expect(Date.now() - t).to.be.below(1_000);
    } finally {
      locker.exec('COMMIT');
      locker.close();
    }
    expect((await send('L-AFTER')).status).to.equal(200);
    expect(await waitFor(() => hook.requests.some((r) => r.body.includes('L-AFTER')), 20_000), 'delivery resumes').to.equal(true);
    expect(hook.requests.some((r) => r.body.includes('L-LOCKED')), 'the refused event was never stored').to.equal(false);
  });
});
