// Start-up order of the real server: it listens (and says so) before the delivery thread
// is up, since intake needs no delivery (what it accepts meanwhile waits in the queue), then
// logs 'delivery started' on its own.
import { expect } from 'chai';
import { spawnServer, type SpawnedServer } from '../helpers/spawn-server.ts';
import { tempDir, waitFor } from '../helpers/test-server.ts';

describe('process: start-up order', function () {
  this.timeout(60_000);
  let server: SpawnedServer | undefined;
  after(async () => {
    server?.child.kill('SIGTERM');
    await server?.exited;
  });

  it("logs 'tracklane listening' before 'delivery started', which follows on its own", async () => {
    server = await spawnServer({ DATA_DIR: tempDir('tl-start-order-'), DATABASE_URL: '' });
    expect(await waitFor(() => server!.output().includes('"msg":"delivery started"'), 20_000), server.output()).to.equal(true);
    const lines = server.output().split('\n');
    const listening = lines.findIndex((l) => l.includes('"msg":"tracklane listening"'));
    const started = lines.findIndex((l) => l.includes('"msg":"delivery started"'));
    expect(listening).to.be.at.least(0);
    expect(started).to.be.greaterThan(listening);
    expect((await fetch(`${server.url}/healthz`)).status).to.equal(200);
  });
});
