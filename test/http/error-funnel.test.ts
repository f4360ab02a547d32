// The one error funnel: a JSON answer that cannot be serialised fails inside it (a coded
// 500 in the family's shape, an error line, the access line saying 500), not in Koa's
// respond after every middleware has returned (a bare text/plain 500 logged as 200).
import { expect } from 'chai';
import Koa from 'koa';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/logger.ts';
import { createMetrics } from '../../src/http/metrics.ts';
import { requestContext } from '../../src/http/request-context.ts';
import { errorFunnel } from '../../src/http/error-funnel.ts';
import type { AppContext } from '../../src/http/types.ts';

/** An array `levels` deep, built without recursion (JSON.stringify overflows its stack on it). */
function deepArray(levels: number): unknown[] {
  const root: unknown[] = [];
  let at = root;
  for (let i = 0; i < levels; i++) at.push((at = []));
  return root;
}

const circular = (): unknown => {
  const o: Record<string, unknown> = { a: 1 };
  o.self = o;
  return o;
};

const BODIES: Record<string, () => unknown> = {
  '/ok': () => ({ items: [1, 'two', { three: null }], next_cursor: null }),
  '/deep': () => ({ changes: deepArray(200_000) }),
  '/circular': circular,
  '/bigint': () => ({ n: 10n }),
};

describe('error funnel: answers serialised inside it', () => {
  const lines: Record<string, any>[] = [];
  let server: Server;
  let url: string;
  before(async () => {
    const sink = new Writable({
      write(chunk, _enc, cb) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        cb();
      },
    });
    const koa = new Koa();
    koa.silent = true;
    koa.use(requestContext({ logger: createLogger('info', sink), metrics: createMetrics({ defaultMetrics: false }) }));
    koa.use(errorFunnel());
    koa.use(async function answer(ctx: AppContext) {
      ctx.body = BODIES[ctx.path]();
    });
    server = createServer(koa.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('answers a JSON body as Koa would: the same text, type and length', async () => {
    const r = await fetch(`${url}/ok`);
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-type')).to.equal('application/json; charset=utf-8');
    const text = await r.text();
    expect(text).to.equal(JSON.stringify(BODIES['/ok']()));
    expect(r.headers.get('content-length')).to.equal(String(Buffer.byteLength(text)));
  });

  for (const path of ['/deep', '/circular', '/bigint']) {
    it(`${path}: a coded JSON 500, an error line, and the access line saying 500`, async () => {
      const r = await fetch(`${url}${path}`);
      const id = r.headers.get('x-request-id');
      expect(r.status).to.equal(500);
      expect(r.headers.get('content-type')).to.match(/^application\/json/);
      expect(await r.json()).to.deep.equal({ error: { code: 'INTERNAL_ERROR', message: 'Internal error' } });
      const mine = lines.filter((l) => l.reqId === id);
      const failed = mine.filter((l) => l.level === 50);
      expect(failed).to.have.length(1);
      expect(failed[0]).to.include({ code: 'INTERNAL_ERROR', msg: 'request failed' });
      expect(mine.find((l) => l.msg === 'request')).to.include({ status: 500, path });
    });
  }
});
