// Connection-level defences on a real server: a connection stalled in its headers is
// closed within the headers timeout plus one second (not up to 30 s later), and open
// connections are capped per client address. The sweep that enforces the headers timeout
// runs on the poll tick while a connection is open, and not at all while none is.
import { expect } from 'chai';
import type { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { atNextTick } from '../../src/poll-tick.ts';
import { startTestServer, waitFor, type TestServer } from '../helpers/test-server.ts';

function open(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), hostname, () => resolve(s));
    s.once('error', reject);
  });
}
const nextTick = () => new Promise<void>((r) => atNextTick(() => r()));
const openConnections = (server: Server) => new Promise<number>((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n))));

/** Counts Node's sweeps of `server`'s connections (its internal list's expired(), which each sweep calls). */
function countSweeps(server: Server): { readonly n: number } {
  const key = Object.getOwnPropertySymbols(server).find((k) => k.description === 'http.server.connections');
  const list = (server as unknown as Record<symbol, { expired(...a: unknown[]): unknown[] }>)[key!];
  const expired = list.expired.bind(list);
  const counter = { n: 0 };
  list.expired = (...a: unknown[]) => {
    counter.n++;
    return expired(...a);
  };
  return counter;
}

const closed = (s: Socket) => new Promise<void>((r) => (s.closed ? r() : s.once('close', () => r())));

describe('http: stalled and excess connections', function () {
  this.timeout(20_000);
  let s: TestServer;
  const sockets: Socket[] = [];
  before(async () => (s = await startTestServer({ HEADERS_TIMEOUT_MS: '1000', MAX_CONNECTIONS_PER_ADDRESS: '3' })));
  after(async () => {
    for (const k of sockets) k.destroy();
    await s.close();
  });

  it('closes a connection that stops in the middle of its headers within the timeout + 1 s', async () => {
    const k = await open(s.url);
    sockets.push(k);
    k.on('error', () => undefined);
    let answer = '';
    k.on('data', (d) => (answer += d));
    k.write('POST /webhooks/service/event HTTP/1.1\r\nHost: x\r\nContent-Ty');
    const started = Date.now();
    expect(await waitFor(() => k.closed || k.readableEnded, 5_000), 'closed by the server').to.equal(true);
    expect(Date.now() - started, 'not left open until the 30 s sweep').to.be.below(5_000);
    expect(answer).to.match(/^HTTP\/1\.1 408/);
  });

  it('sweeps its connections on the poll tick while one is open, and not at all while none is', async () => {
    const server = s.running.server;
    const sweeps = countSweeps(server);
    expect(await waitFor(async () => (await openConnections(server)) === 0, 10_000), 'no connection open').to.equal(true);
    let before = sweeps.n;
    for (let i = 0; i < 3; i++) await nextTick();
    expect(sweeps.n - before, 'sweeps over three ticks with no connection open').to.equal(0);
    const k = await open(s.url);
    sockets.push(k);
    k.on('error', () => undefined);
    k.resume();
    before = sweeps.n;
    // Stalled in its headers: a sweep closes it past the headers timeout (a second here).
    k.write('GET /healthz HTTP/1.1\r\nHo');
    expect(await waitFor(() => k.closed || k.readableEnded, 10_000), 'closed by a sweep').to.equal(true);
    expect(sweeps.n - before, 'sweeps while it was open').to.be.at.least(1);
  });

  it('refuses a fourth connection from one address while three are open, and serves again once one closes', async () => {
    const held = await Promise.all([open(s.url), open(s.url), open(s.url)]);
    sockets.push(...held);
    // Connections are accepted in order: the fourth is counted after the three.
    const extra = await open(s.url);
    extra.on('error', () => undefined);
    await closed(extra);
    held[0].destroy();
    expect(await waitFor(async () => {
      try {
        return (await fetch(`${s.url}/healthz`)).status === 200;
      } catch {
        return false;
      }
    }, 5_000)).to.equal(true);
  });
});
