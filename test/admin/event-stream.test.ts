// The live stream's cost on the HTTP thread and its limits: one serialisation per message
// whatever the number of clients, none for a client over its byte budget, and a cap on
// streams in total and per client address (429 + Retry-After), freed when a stream ends.
import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import type { PassThrough } from 'node:stream';
import { createEventStreams } from '../../src/admin/event-stream.ts';
import type { IntakeFeed, IntakeMessage } from '../../src/intake/intake-feed.ts';
import type { AppContext } from '../../src/http/types.ts';
import { startTestApp, waitFor, type TestApp } from '../helpers/test-app.ts';
import { auth, TOKEN } from './admin-client.ts';

/** A feed the test publishes into by hand. */
function handFeed(): IntakeFeed & { send(m: IntakeMessage): void } {
  const listeners = new Set<(m: IntakeMessage) => void>();
  return {
    publish() {},
    subscribe(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    send(m) {
      for (const l of listeners) l(m);
    },
  };
}

/** Just what open() touches of a Koa context; the body is the stream nobody reads. */
function fakeCtx(ip: string): AppContext & { req: EventEmitter } {
  const req = Object.assign(new EventEmitter(), { socket: { setTimeout() {} } });
  return { ip, req, set() {}, status: 0, body: undefined } as unknown as AppContext & { req: EventEmitter };
}

/** A message that counts how often it is serialised. */
function counted(counter: { n: number }, size = 100): IntakeMessage {
  const m = { id: 'tl_1', script_id: 'ABCD1234', name: 'lead_created', event_id: 'X', status: 'accepted', source: 'event', received_at: 1, acked_at: 2, errors: [], warnings: ['w'.repeat(size)] };
  return { ...m, toJSON: () => ((counter.n += 1), m) } as unknown as IntakeMessage;
}

describe('admin live stream: cost per message', () => {
  it('serialises a message once for all the clients that want it, and not at all when none does', () => {
    const feed = handFeed();
    const streams = createEventStreams(feed, { max: 100, perAddress: 100 });
    const ctxs = Array.from({ length: 10 }, (_, i) => fakeCtx(`10.0.0.${i}`));
    for (const ctx of ctxs) streams.open(ctx, {});
    const counter = { n: 0 };
    feed.send(counted(counter));
    expect(counter.n).to.equal(1);
    for (const ctx of ctxs) expect((ctx.body as PassThrough).readableLength).to.be.greaterThan(100);
    streams.closeAll();

    const filtered = createEventStreams(feed, { max: 100, perAddress: 100 });
    for (let i = 0; i < 5; i++) filtered.open(fakeCtx(`10.0.1.${i}`), { scriptId: 'OTHER999' });
    const none = { n: 0 };
    feed.send(counted(none));
    expect(none.n).to.equal(0);
    filtered.closeAll();
  });

  it('formats nothing for clients over their byte budget, and tells each how many it missed', () => {
    const feed = handFeed();
    const streams = createEventStreams(feed, { max: 100, perAddress: 100 });
    const ctxs = Array.from({ length: 5 }, (_, i) => fakeCtx(`10.0.2.${i}`));
    for (const ctx of ctxs) streams.open(ctx, {});
    // Nobody reads: 200 KB messages fill every client past its 1 MiB budget.
    for (let i = 0; i < 8; i++) feed.send(counted({ n: 0 }, 200_000));
    const counter = { n: 0 };
    for (let i = 0; i < 20; i++) feed.send(counted(counter));
    expect(counter.n).to.equal(0);
    // A client that catches up gets the overflow count before the next message.
    const out = ctxs[0].body as PassThrough;
    while (out.read() !== null);
    out.resume();
    let text = '';
    out.on('data', (c: Buffer) => (text += c.toString()));
    feed.send(counted(counter));
    expect(counter.n).to.equal(1);
    expect(text).to.match(/^event: overflow\ndata: \{"missed":2\d\}\n\nevent: intake\n/);
    streams.closeAll();
  });
});

describe('admin live stream: limits', () => {
  let s: TestApp;
  before(async () => (s = await startTestApp({ ADMIN_TOKEN: TOKEN, ADMIN_STREAMS_MAX: '3', ADMIN_STREAMS_PER_ADDRESS: '2', TRUST_PROXY: '1' })));
  after(() => s.close());

  const open = async (from: string) => {
    const ctrl = new AbortController();
    const res = await fetch(`${s.url}/admin/stream`, { headers: { ...auth, 'x-forwarded-for': from }, signal: ctrl.signal });
    return { res, close: () => ctrl.abort() };
  };
  const streamCount = () => s.running.app.streams.count();

  it('answers 429 RATE_LIMITED with Retry-After past the per-address and the total caps, and frees a slot when a stream ends', async () => {
    const a1 = await open('198.51.100.1');
    const a2 = await open('198.51.100.1');
    expect([a1.res.status, a2.res.status]).to.deep.equal([200, 200]);
    const a3 = await open('198.51.100.1');
    expect(a3.res.status).to.equal(429);
    expect(a3.res.headers.get('retry-after')).to.equal('5');
    expect(((await a3.res.json()) as any).error.code).to.equal('RATE_LIMITED');
    const b1 = await open('198.51.100.2');
    expect(b1.res.status).to.equal(200);
    const c1 = await open('198.51.100.3');
    expect(c1.res.status).to.equal(429);
    expect(((await c1.res.json()) as any).error.message).to.contain('ADMIN_STREAMS_MAX');
    a1.close();
    expect(await waitFor(() => streamCount() === 2, 5_000)).to.equal(true);
    const c2 = await open('198.51.100.3');
    expect(c2.res.status).to.equal(200);
    for (const x of [a2, b1, c2]) x.close();
    expect(await waitFor(() => streamCount() === 0, 5_000)).to.equal(true);
  });
});
