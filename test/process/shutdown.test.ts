// SIGTERM: the real process stops accepting, finishes what it acknowledged, exits 0 within 10 s.
import { expect } from 'chai';
import { rmSync } from 'node:fs';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/open-store.ts';
import { createAccountService } from '../../src/accounts/account-service.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { tempDir } from '../helpers/test-server.ts';
import { spawnServer } from '../helpers/spawn-server.ts';

describe('graceful shutdown of the real process', () => {
  let dataDir: string;
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('on SIGTERM stores every acknowledged event, refuses or closes the rest, and exits 0 within 10 s', async () => {
    dataDir = tempDir();
    const store = await openStore(loadConfig({ DATA_DIR: dataDir }));
    const { account, accessToken } = await createAccountService(store).create({ name: 'Shutdown', tier: 'FLEX', addon: true });
    await store.close();

    const server = await spawnServer({ DATA_DIR: dataDir });
    const acked: string[] = [];
    let refused = 0;
    let stop = false;
    const send = async (i: number) => {
      try {
        const r = await fetch(`${server.url}${INTAKE_PATHS.event}?id=${account.scriptId}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-service-access-token': accessToken },
          body: JSON.stringify({ event: { name: 'lead_created', id: `SIG-${i}` }, context: { environment: 'prod', data_source: 'crm' } }),
        });
        if (r.status === 200) acked.push(`SIG-${i}`);
        else {
          expect(r.status).to.equal(503);
          refused++;
        }
        await r.arrayBuffer().catch(() => undefined);
      } catch {
        refused++; // connection closed or refused after the listener stopped
      }
    };
    let n = 0;
    const workers = Array.from({ length: 8 }, async () => {
      while (!stop) await send(n++);
    });
    while (acked.length < 200) await new Promise((r) => setTimeout(r, 10));
    const t0 = Date.now();
    server.child.kill('SIGTERM');
    const code = await server.exited;
    const elapsed = Date.now() - t0;
    stop = true;
    await Promise.all(workers);

    expect(code).to.equal(0);
    expect(elapsed).to.be.below(10_000);
    expect(server.output()).to.include('"msg":"shutting down"');
    const after = await openStore(loadConfig({ DATA_DIR: dataDir }));
    const stored = new Set((await after.events.list({ scriptId: account.scriptId, limit: 100_000 })).map((e) => e.eventId));
    await after.close();
    for (const id of acked) expect(stored.has(id), `acknowledged ${id} is stored`).to.equal(true);
    expect(acked.length).to.be.at.least(200);
  });
});
