// A supervisor signals only the process it started (`docker stop` on `CMD ["npm","start"]`,
// systemd's KillMode=process, `kill <pid>`): the server under it must drain and exit, and no
// process of the tree it started may outlive it, re-parented and still holding the port.
import { expect } from 'chai';
import { rmSync } from 'node:fs';
import { once } from 'node:events';
import { connect } from 'node:net';
import { tempDir, waitFor } from '../helpers/test-server.ts';
import { spawnServer, type SpawnedServer } from '../helpers/spawn-server.ts';
import { commandLine, descendants, isRunning } from '../helpers/process-tree.ts';

/** Resolves with the connection error's code, or 'connected' if something still listens. */
function tryConnect(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname, () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

interface Launched {
  server: SpawnedServer;
  /** The launcher's pid (npm) and every process under it once the server listens. */
  launcher: number;
  tree: number[];
  /** Resolves once every process holding the launcher's stdout and stderr has ended and all they wrote is read. */
  closed: Promise<unknown>;
}

async function launch(command: string[], dataDir: string): Promise<Launched> {
  const server = await spawnServer({ DATA_DIR: dataDir }, 30_000, undefined, command);
  const closed = once(server.child, 'close');
  const launcher = server.child.pid!;
  const tree = descendants(launcher);
  const entry = tree.find((pid) => /src\/index\.cjs|tracklane serve/.test(commandLine(pid)));
  expect(entry, `the server runs under ${command.join(' ')}: ${tree.map(commandLine).join(' | ')}`).to.be.a('number');
  return { server, launcher, tree, closed };
}

/** Waits until the launcher and every process it started have ended, up to `ms`. */
function treeEnded(launched: Launched, ms: number): Promise<boolean> {
  return waitFor(() => [launched.launcher, ...launched.tree].every((pid) => !isRunning(pid)), ms, 50);
}

describe('process: a signal to the launcher alone stops the whole tree', function () {
  this.timeout(60_000);
  let dataDir: string;
  let launched: Launched | undefined;
  beforeEach(() => {
    dataDir = tempDir();
    launched = undefined;
  });
  afterEach(() => {
    // A failed run leaves the orphan serving: end it here, by the pids this test started.
    for (const pid of launched ? [launched.launcher, ...launched.tree] : []) {
      if (isRunning(pid)) process.kill(pid, 'SIGKILL');
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('SIGTERM to `npm start`: the server drains, exits 0 through npm, and nothing is left', async () => {
    launched = await launch(['npm', 'start'], dataDir);
    process.kill(launched.launcher, 'SIGTERM');
    expect(await treeEnded(launched, 10_000), `still running: ${[launched.launcher, ...launched.tree].filter(isRunning).map(commandLine).join(' | ')}`).to.equal(true);
    expect(await launched.server.exited, 'npm passes on the server\'s exit code').to.equal(0);
    await launched.closed;
    expect(launched.server.output()).to.include('"msg":"shutting down"');
    expect(await tryConnect(launched.server.url)).to.equal('ECONNREFUSED');
  });

  it('SIGTERM to `npx tracklane serve`: the server drains and exits, and nothing is left', async () => {
    launched = await launch(['npx', 'tracklane', 'serve'], dataDir);
    process.kill(launched.launcher, 'SIGTERM');
    expect(await treeEnded(launched, 10_000), `still running: ${[launched.launcher, ...launched.tree].filter(isRunning).map(commandLine).join(' | ')}`).to.equal(true);
    await launched.closed;
    expect(launched.server.output()).to.include('"msg":"shutting down"');
    expect(await tryConnect(launched.server.url)).to.equal('ECONNREFUSED');
  });

  it('SIGKILL to `npm start` (a supervisor giving up on it): the orphaned server notices, drains and exits', async () => {
    launched = await launch(['npm', 'start'], dataDir);
    process.kill(launched.launcher, 'SIGKILL');
    expect(await treeEnded(launched, 10_000), `still running: ${[launched.launcher, ...launched.tree].filter(isRunning).map(commandLine).join(' | ')}`).to.equal(true);
    await launched.closed;
    expect(launched.server.output()).to.match(/"reason":"parent process exited".*"msg":"shutting down"/);
    expect(await tryConnect(launched.server.url)).to.equal('ECONNREFUSED');
  });
});
