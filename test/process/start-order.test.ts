// Start-up order of the real server: it listens (and says so) before the delivery thread
// is up, since intake needs no delivery (what it accepts meanwhile waits in the queue), then
// logs 'delivery started' on its own; /readyz is never ready before the 'listening' line;
// a start that fails (a port in use) stops what it started and says so last.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { ROOT, spawnServer, type SpawnedServer } from '../helpers/spawn-server.ts';
import { shippedFolderEnv } from '../helpers/shipped-folders.ts';
import { createTestDatabase, requirePostgres, type TestDatabase } from '../helpers/postgres.ts';
import { tempDir, waitFor } from '../helpers/test-server.ts';

/** A loopback port held open by this process until `close`. */
async function holdPort(): Promise<Server> {
  const held = createServer();
  await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
  return held;
}

const portOf = (s: Server) => (s.address() as { port: number }).port;

/** The real entry run to its end: exit code, stdout and stderr apart. */
function runEntry(env: Record<string, string>) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [join(ROOT, 'src/index.cjs')], {
      cwd: ROOT, encoding: 'utf8', timeout: 30_000,
      env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'info', ...shippedFolderEnv(), ...env },
    }, (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }));
  });
}

const lastLine = (text: string) => text.trim().split('\n').at(-1) ?? '';

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

  it("a port in use: exit 1, everything started is stopped, and 'failed to start' is the last line on stdout and stderr", async () => {
    const held = await holdPort();
    try {
      const r = await runEntry({ PORT: String(portOf(held)), DATA_DIR: tempDir('tl-start-busy-'), DATABASE_URL: '' });
      expect(r.code, r.stdout + r.stderr).to.equal(1);
      const last = JSON.parse(lastLine(r.stdout)) as { msg: string; err: { code: string } };
      expect([last.msg, last.err.code], r.stdout).to.deep.equal(['tracklane failed to start', 'EADDRINUSE']);
      expect(r.stdout, 'the rules were loaded before the failure').to.include('"msg":"rules loaded"');
      expect(lastLine(r.stderr)).to.match(/^tracklane: failed to start: listen EADDRINUSE/);
    } finally {
      held.close();
    }
  });

  describe('on PostgreSQL', () => {
    let db: TestDatabase | undefined;
    let pgServer: SpawnedServer | undefined;
    before(async function () {
      await requirePostgres(this);
    });
    after(async () => {
      pgServer?.child.kill('SIGTERM');
      await pgServer?.exited;
      await db?.drop();
    });

    it("/readyz answers ready only after the 'tracklane listening' line", async () => {
      db = await createTestDatabase();
      // A port known before the server says it: the probe polls it from the start.
      const probe = await holdPort();
      const port = portOf(probe);
      await new Promise((r) => probe.close(r));
      const spawned = spawnServer({ PORT: String(port), DATABASE_URL: db.url, LOG_LEVEL: 'debug' }, 30_000);
      let done = false;
      void spawned.catch(() => (done = true));
      const polling = (async () => {
        while (!done) {
          done = await fetch(`http://127.0.0.1:${port}/readyz`).then((res) => res.status === 200, () => false);
          if (!done) await new Promise((r) => setTimeout(r, 10)); // a poll interval, not a wait for an outcome
        }
      })();
      pgServer = await spawned;
      await polling;
      const lines = () => pgServer!.output().split('\n');
      const firstReadyIn = (all: string[]) => all.findIndex((l) => l.includes('"path":"/readyz"') && l.includes('"status":200'));
      expect(await waitFor(() => firstReadyIn(lines()) >= 0, 10_000), pgServer.output()).to.equal(true);
      const listening = lines().findIndex((l) => l.includes('"msg":"tracklane listening"'));
      const firstReady = firstReadyIn(lines());
      expect(listening, pgServer.output()).to.be.at.least(0);
      expect(firstReady, 'the first ready answer follows the listening line').to.be.greaterThan(listening);
    });
  });
});
