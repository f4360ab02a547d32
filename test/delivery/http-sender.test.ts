// The HTTP sender against real loopback servers: the SSRF guard at connect time (no byte
// reaches a blocked address, DNS rebinding included), no redirects, and bounded bytes and time.
import { expect } from 'chai';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { createHttpSender, type HttpSender, type Resolver, type SendResult } from '../../src/delivery/http-sender.ts';
import type { OutboundRequest } from '../../src/destinations/types.ts';
import { closedPort, startDouble, until, type DestinationDouble } from './helpers/destination-double.ts';

function post(url: string, body = '{"event":"purchase"}'): OutboundRequest {
  return { method: 'POST', url, headers: { 'content-type': 'application/json', 'x-trace': 'abc' }, body, eventIds: ['e1'] };
}

function expectError(r: SendResult, errorClass: string): Extract<SendResult, { kind: 'error' }> {
  expect(r.kind, JSON.stringify(r)).to.equal('error');
  const e = r as Extract<SendResult, { kind: 'error' }>;
  expect(e.errorClass, e.message).to.equal(errorClass);
  return e;
}

function expectResponse(r: SendResult): Extract<SendResult, { kind: 'response' }> {
  expect(r.kind, JSON.stringify(r)).to.equal('response');
  return r as Extract<SendResult, { kind: 'response' }>;
}

/** Every socket the double accepted has closed (undici may open and drop a spare one after an abort). */
const allClosed = (d: DestinationDouble) => d.connections > 0 && d.closedConnections === d.connections;

/** A resolver that answers from a script and records the names it was asked for. */
function scriptedResolver(...answers: string[][]): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string) => {
    calls.push(hostname);
    const next = answers[Math.min(calls.length, answers.length) - 1];
    return next.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { calls });
}

describe('http sender', function () {
  this.timeout(10_000);
  const senders: HttpSender[] = [];
  const doubles: DestinationDouble[] = [];
  const sender = (opts: Parameters<typeof createHttpSender>[0]) => {
    const s = createHttpSender(opts);
    senders.push(s);
    return s;
  };
  const double = async (...args: Parameters<typeof startDouble>) => {
    const d = await startDouble(...args);
    doubles.push(d);
    return d;
  };
  const ok = () => double((_req, res) => res.end('ok'));

  afterEach(async () => {
    await Promise.all(senders.splice(0).map((s) => s.close()));
    await Promise.all(doubles.splice(0).map((d) => d.close()));
  });

  describe('connect-time SSRF guard (private destinations not allowed)', () => {
    it('blocks a hostname that resolves to loopback; the double receives nothing', async () => {
      const d = await ok();
      const lookup = scriptedResolver(['127.0.0.1']);
      const r = await sender({ allowPrivate: false, lookup }).send(post(`http://evil.example:${d.port}/collect`));
      const e = expectError(r, 'blocked');
      expect(e.message).to.equal('destination resolves to a blocked address (loopback)');
      expect(lookup.calls).to.deep.equal(['evil.example']);
      expect(d.connections).to.equal(0);
      expect(d.hits).to.deep.equal([]);
    });

    it('blocks IPv4-mapped loopback and a mixed public/private answer', async () => {
      const d = await ok();
      for (const answer of [['::ffff:127.0.0.1'], ['93.184.216.34', '127.0.0.1'], ['169.254.169.254']]) {
        const r = await sender({ allowPrivate: false, lookup: scriptedResolver(answer) }).send(post(`http://evil.example:${d.port}/`));
        expectError(r, 'blocked');
      }
      expect(d.connections).to.equal(0);
    });

    it('DNS rebinding: public at check time, loopback at connect time → blocked on the connecting call', async () => {
      const d = await ok();
      const lookup = scriptedResolver(['93.184.216.34'], ['127.0.0.1']);
      // What a check-then-connect guard would see: a public answer.
      const seenAtCheck = await lookup('rebind.example');
      expect(seenAtCheck.map((a) => a.address)).to.deep.equal(['93.184.216.34']);
      const r = await sender({ allowPrivate: false, lookup }).send(post(`http://rebind.example:${d.port}/`));
      expectError(r, 'blocked');
      // The connection made exactly one lookup of its own, and it is that answer that was refused.
      expect(lookup.calls).to.deep.equal(['rebind.example', 'rebind.example']);
      expect(d.connections).to.equal(0);
    });

    it('checks IP-literal hosts before dispatch, since undici skips lookup for them (undici#2019)', async () => {
      const d = await ok();
      const lookup = scriptedResolver(['93.184.216.34']);
      const s = sender({ allowPrivate: false, lookup });
      for (const host of ['127.0.0.1', '2130706433', '0x7f.1', '[::1]', '[::ffff:7f00:1]', '[64:ff9b::7f00:1]']) {
        const e = expectError(await s.send(post(`http://${host}:${d.port}/`)), 'blocked');
        expect(e.message).to.match(/^destination not allowed: address .* is /);
      }
      expect(lookup.calls).to.deep.equal([]);
      expect(d.connections).to.equal(0);
    });

    it('refuses other schemes, userinfo and metadata names at send time too', async () => {
      const s = sender({ allowPrivate: false, lookup: scriptedResolver(['93.184.216.34']) });
      for (const url of ['file:///etc/passwd', 'gopher://x/', 'ftp://x/', 'http://user@example.com/', 'http://metadata.google.internal/']) {
        expectError(await s.send(post(url)), 'blocked');
      }
    });

    it('a name that does not resolve is a dns error', async () => {
      const lookup: Resolver = async (hostname) => {
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      };
      const e = expectError(await sender({ allowPrivate: false, lookup }).send(post('http://nxdomain.example/')), 'dns');
      expect(e.message).to.equal('DNS lookup failed: host not found');
    });

    it('a resolver that never answers is cut off by the connect timeout', async () => {
      const lookup: Resolver = () => new Promise(() => {});
      const r = await sender({ allowPrivate: false, lookup, connectTimeoutMs: 200, totalTimeoutMs: 5_000 }).send(post('http://slow-dns.example/'));
      const e = expectError(r, 'timeout');
      expect(e.message).to.equal('connect timed out');
      expect(e.latencyMs).to.be.below(3_000);
    });
  });

  describe('against loopback doubles (private destinations allowed)', () => {
    it('200: sends method, headers and body; returns status, lower-cased headers and body', async () => {
      const d = await double((_req, res) => {
        res.setHeader('X-Request-ID', 'r-1');
        res.setHeader('Set-Cookie', ['a=1', 'b=2']);
        res.end('{"ok":true}');
      });
      const r = expectResponse(await sender({ allowPrivate: true }).send(post(d.url('/mp/collect?x=1'))));
      expect(r.response.status).to.equal(200);
      expect(r.response.body).to.equal('{"ok":true}');
      expect(r.response.headers['x-request-id']).to.equal('r-1');
      expect(r.response.headers['set-cookie']).to.equal('a=1, b=2');
      expect(Object.keys(r.response.headers).every((k) => k === k.toLowerCase())).to.equal(true);
      expect(r.latencyMs).to.be.a('number').at.least(0);
      expect(d.hits).to.have.length(1);
      expect(d.hits[0]).to.include({ method: 'POST', path: '/mp/collect?x=1', body: '{"event":"purchase"}' });
      expect(d.hits[0].headers['x-trace']).to.equal('abc');
    });

    it('a response header named __proto__ is kept as a plain header, never as the prototype', async () => {
      const d = await double((_req, res) => {
        res.setHeader('__proto__', 'x');
        res.end('{}');
      });
      const r = expectResponse(await sender({ allowPrivate: true }).send(post(d.url())));
      expect(Object.getPrototypeOf(r.response.headers)).to.equal(Object.prototype);
      expect(Object.hasOwn(r.response.headers, '__proto__')).to.equal(true);
      expect(Object.getOwnPropertyDescriptor(r.response.headers, '__proto__')?.value).to.equal('x');
    });

    it('checks a URL on every send: the same blocked URL is refused each time', async () => {
      const s = sender({ allowPrivate: false });
      for (let i = 0; i < 3; i++) expectError(await s.send(post('http://127.0.0.1:9/x')), 'blocked');
      expectError(await s.send(post('ftp://example.com/x')), 'blocked');
    });

    it('a request undici refuses to send (a header with a line break) is a failed attempt, not a throw', async () => {
      const d = await ok();
      const bad = { ...post(d.url()), headers: { 'content-type': 'application/json', 'x-bad': 'a\r\nInjected: 1' } };
      const r = await sender({ allowPrivate: true }).send(bad);
      expect(r.kind).to.equal('error');
      expect(d.hits).to.have.length(0);
    });

    it('resolves hostnames through the lookup when private destinations are allowed', async () => {
      const d = await ok();
      const lookup = scriptedResolver(['127.0.0.1']);
      const r = expectResponse(await sender({ allowPrivate: true, lookup }).send(post(`http://sandbox.test:${d.port}/`)));
      expect(r.response.status).to.equal(200);
      expect(lookup.calls).to.deep.equal(['sandbox.test']);
      expect(d.hits[0].headers.host).to.equal(`sandbox.test:${d.port}`);
    });

    it('302 is returned as is; its Location is never requested', async () => {
      const internal = await ok();
      const d = await double((_req, res) => {
        res.writeHead(302, { Location: internal.url('/latest/meta-data/') });
        res.end();
      });
      const r = expectResponse(await sender({ allowPrivate: true }).send(post(d.url('/start'))));
      expect(r.response.status).to.equal(302);
      expect(r.response.headers.location).to.equal(internal.url('/latest/meta-data/'));
      expect(d.hits.map((h) => h.path)).to.deep.equal(['/start']);
      expect(internal.connections).to.equal(0);
    });

    it('a destination that never answers → timeout at the total deadline', async () => {
      const d = await double(() => {});
      const r = await sender({ allowPrivate: true, totalTimeoutMs: 300 }).send(post(d.url()));
      const e = expectError(r, 'timeout');
      expect(e.message).to.equal('total request time limit exceeded');
      expect(e.latencyMs).to.be.at.least(250).and.below(2_000);
      await until(() => allClosed(d), 3_000, 'the hung connection to close');
    });

    it('a 1 MB body is truncated to maxResponseBytes (default 20 000)', async () => {
      const big = 'x'.repeat(1024 * 1024);
      const d = await double((_req, res) => res.end(big));
      const r = expectResponse(await sender({ allowPrivate: true }).send(post(d.url())));
      expect(r.response.status).to.equal(200);
      expect(r.response.body).to.equal(big.slice(0, 20_000));
      const small = expectResponse(await sender({ allowPrivate: true, maxResponseBytes: 1_000 }).send(post(d.url())));
      expect(small.response.body).to.have.length(1_000);
    });

    it('an endless body is cut at the byte cap and its connection dropped', async () => {
      let written = 0;
      const d = await double((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(64 * 1024, 'y');
        const pump = () => {
          while (!res.destroyed && res.write(chunk)) written += chunk.length;
          if (!res.destroyed) res.once('drain', pump);
        };
        pump();
      });
      const r = expectResponse(await sender({ allowPrivate: true, maxResponseBytes: 5_000 }).send(post(d.url())));
      expect(r.response.body).to.equal('y'.repeat(5_000));
      await until(() => allClosed(d), 3_000, 'the endless connection to close');
      expect(written).to.be.below(64 * 1024 * 1024);
    });

    it('a slow-drip body is bounded by the total timeout', async () => {
      const d = await double((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const drip = setInterval(() => (res.destroyed ? clearInterval(drip) : res.write('.')), 20);
        res.on('close', () => clearInterval(drip));
      });
      const r = await sender({ allowPrivate: true, totalTimeoutMs: 400 }).send(post(d.url()));
      const e = expectError(r, 'timeout');
      expect(e.latencyMs).to.be.at.least(350).and.below(2_000);
      await until(() => allClosed(d), 3_000, 'the dripping connection to close');
    });

    it('connection refused → connect', async () => {
      const port = await closedPort();
      const e = expectError(await sender({ allowPrivate: true }).send(post(`http://127.0.0.1:${port}/`)), 'connect');
      expect(e.message).to.equal('connection refused');
      expect(e.message).not.to.contain(String(port));
    });

    it('a socket closed mid-request → reset', async () => {
      const d = await double((req) => req.socket.destroy());
      expectError(await sender({ allowPrivate: true }).send(post(d.url())), 'reset');
    });

    it('https to a server that does not speak TLS → tls', async () => {
      const tcp = createTcpServer((socket: Socket) => socket.resume().end('HTTP/1.1 400 Bad Request\r\n\r\n'));
      await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = tcp.address() as AddressInfo;
        const e = expectError(await sender({ allowPrivate: true }).send(post(`https://127.0.0.1:${port}/`)), 'tls');
        expect(e.message).to.match(/^TLS handshake failed/);
      } finally {
        await new Promise<void>((resolve) => tcp.close(() => resolve()));
      }
    });

    it('keeps connections alive: sequential requests to one origin share one socket', async () => {
      const d = await ok();
      const s = sender({ allowPrivate: true });
      for (let i = 0; i < 4; i++) expect(expectResponse(await s.send(post(d.url(`/n/${i}`)))).response.status).to.equal(200);
      expect(d.hits).to.have.length(4);
      expect(d.connections).to.equal(1);
    });

    it("the caller's signal aborts an attempt early", async () => {
      const d = await double(() => {});
      const ac = new AbortController();
      const pending = sender({ allowPrivate: true, totalTimeoutMs: 5_000 }).send(post(d.url()), ac.signal);
      await until(() => d.hits.length === 1, 3_000, 'the request to arrive');
      ac.abort();
      const e = expectError(await pending, 'other');
      expect(e.message).to.equal('request aborted');
      expect(e.latencyMs).to.be.below(2_000);
    });

    it('an already-aborted signal sends nothing', async () => {
      const d = await ok();
      const ac = new AbortController();
      ac.abort();
      expectError(await sender({ allowPrivate: true }).send(post(d.url()), ac.signal), 'other');
      expect(d.connections).to.equal(0);
    });
  });
});
