// The admin gate against an attacker's spellings: every route of every router mounted in
// the real app whose path is under /admin, asked for with case changes, doubled and
// trailing slashes, percent-encoded letters and dot segments, without a token and with a
// wrong one. None may answer anything but 401 or 404; the spellings the routers match
// must meet the gate (401). Also: the content-type rule for changes, named tokens.
import { expect } from 'chai';
import { request } from 'node:http';
import type Router from '@koa/router';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { auth, TOKEN } from './admin-client.ts';
import { parseAdminTokens } from '../../src/config.ts';
import { spawnServer, type SpawnedServer } from '../helpers/spawn-server.ts';
import { tempDir } from '../helpers/test-server.ts';

interface Answer { status: number; type: string; body: string }

/** A request sent with its path exactly as written (fetch would normalise it first). */
function raw(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method, path, headers: { ...headers, ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) } }, (res) => {
      // A stream that opened would never end: read only what a refusal would hold.
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
        if (res.headers['content-type']?.startsWith('text/event-stream')) req.destroy();
      });
      const done = () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body: text });
      res.on('end', done);
      res.on('close', done);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Every (method, path) that a router mounted in the app serves under /admin, params filled in. */
function adminRoutes(app: TestApp): Array<{ method: string; path: string }> {
  const routers = app.running.app.koa.middleware
    .map((mw) => (mw as { router?: Router }).router)
    .filter((r): r is Router => r !== undefined);
  const out: Array<{ method: string; path: string }> = [];
  for (const layer of routers.flatMap((r) => r.stack)) {
    const path = String(layer.path);
    if (!/^\/admin/i.test(path)) continue;
    for (const method of layer.methods.filter((m) => m !== 'HEAD')) {
      out.push({ method, path: path.replace(/:(\w+)/g, (_, name: string) => (name === 'id' ? 'ABCD1234' : `x${name}`)) });
    }
  }
  return out;
}

/** The ways an attacker spells one path: each must meet the gate or miss every route. */
export function spellings(path: string): string[] {
  const rest = path.slice('/admin'.length);
  const enc = (s: string) => s.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`);
  return [
    path.toUpperCase(),
    `/ADMIN${rest}`,
    `/aDmIn${rest}`,
    `/Admin${rest.replace(/[a-z]/, (c) => c.toUpperCase())}`,
    `${path}/`,
    `${path}//`,
    `/${path}`,
    `/admin/${rest}`,
    `/${enc('admin')}${rest}`,
    `/%41DMIN${rest}`,
    `${enc(path)}`,
    `/admin${rest.replace('/', '%2F')}`,
    `/x/..${path}`,
    `/admin/.${rest}`,
    `/admin/x/..${rest}`,
    `/./ADMIN${rest}`,
    `${path}?token=${TOKEN}`,
    `${path};x=1`,
  ];
}

describe('admin gate: every admin route, every spelling', () => {
  let s: TestApp;
  before(async () => (s = await startTestApp({ ADMIN_TOKEN: TOKEN })));
  after(() => s.close());

  it('finds the admin routes of every mounted router (the stream, accounts, rules, replay among them)', () => {
    const paths = adminRoutes(s).map((r) => `${r.method} ${r.path}`);
    expect(paths.length).to.be.greaterThan(25);
    for (const want of ['GET /admin/stream', 'POST /admin/accounts', 'POST /admin/accounts/ABCD1234/rotate-token', 'POST /admin/deliveries/replay', 'GET /admin/destinations', 'GET /admin/events']) {
      expect(paths).to.include(want);
    }
    expect(paths.some((p) => p.startsWith('POST /admin/rules/'))).to.equal(true);
  });

  for (const [label, headers] of [['no token', {}], ['a wrong token', { authorization: 'Bearer not-the-admin-token-at-all' }], ['a token in another scheme', { authorization: `Basic ${TOKEN}` }]] as const) {
    it(`with ${label}, no spelling of any admin route answers but 401 or 404, and the routers' own spellings 401`, async () => {
      for (const route of adminRoutes(s)) {
        for (const path of [route.path, ...spellings(route.path)]) {
          const body = route.method === 'GET' ? undefined : '{"name":"Mallory","all":true,"force":true}';
          const r = await raw(s.url, route.method, path, { ...headers, 'content-type': 'application/json' }, body);
          expect([401, 404], `${route.method} ${path} → ${r.status} ${r.body.slice(0, 120)}`).to.include(r.status);
          expect(r.type, `${route.method} ${path}`).to.match(/^application\/json/);
        }
        for (const path of [route.path, route.path.toUpperCase(), `/aDmIn${route.path.slice(6)}`, `${route.path}/`]) {
          const r = await raw(s.url, route.method, path, headers, route.method === 'GET' ? undefined : '{}');
          expect(r.status, `${route.method} ${path}`).to.equal(401);
        }
      }
    });
  }

  it('the token opens every spelling the routers match, so the gate is what stands between', async () => {
    for (const path of ['/admin/accounts', '/ADMIN/accounts', '/aDmIn/Accounts', '/admin/accounts/']) {
      expect((await raw(s.url, 'GET', path, auth)).status, path).to.equal(200);
    }
  });

  it('the live stream does not open for /ADMIN/stream without a token', async () => {
    for (const path of ['/ADMIN/stream', '/Admin/Stream', '/admin/stream/', '/%61dmin/stream']) {
      const r = await raw(s.url, 'GET', path, { accept: 'text/event-stream' });
      expect([401, 404], path).to.include(r.status);
      expect(r.type).not.to.match(/event-stream/);
    }
  });

  it('the console answers the same files whatever the case, and no console spelling reaches the admin API', async () => {
    for (const path of ['/console/../admin/accounts', '/CONSOLE/..%2Fadmin/accounts', '/console/%2e%2e/admin/accounts', '/console//admin/accounts']) {
      const r = await raw(s.url, 'GET', path);
      expect(r.status, path).to.equal(404);
      expect(r.body).not.to.contain('script_id');
    }
  });
});

describe('admin gate: with the admin API off', () => {
  let s: TestApp;
  before(async () => (s = await startTestApp()));
  after(() => s.close());

  it('answers 404 to every spelling of /admin and /console, token or not', async () => {
    for (const path of ['/admin/accounts', ...spellings('/admin/accounts'), '/console', '/CONSOLE', '/Console/console.js']) {
      for (const headers of [{}, auth]) {
        expect((await raw(s.url, 'GET', path, headers)).status, path).to.equal(404);
      }
    }
  });
});

describe('admin gate: changes are application/json', () => {
  let s: TestApp;
  before(async () => (s = await startTestApp({ ADMIN_TOKEN: TOKEN })));
  after(() => s.close());

  it('refuses a browser\'s simple request (text/plain, a form, no type) with 415 before it changes anything', async () => {
    const shop = await s.account();
    const paths = [`/admin/accounts/${shop.scriptId}/rotate-token`, '/admin/deliveries/retry-now', '/admin/destinations/dst_0000000000000000/resume', '/admin/accounts'];
    for (const path of paths) {
      for (const headers of [{ 'content-type': 'text/plain' }, { 'content-type': 'application/x-www-form-urlencoded' }, { 'content-type': 'multipart/form-data; boundary=x' }, {}] as Array<Record<string, string>>) {
        const r = await raw(s.url, 'POST', path, { ...auth, ...headers }, '');
        expect(r.status, `${path} ${JSON.stringify(headers)}`).to.equal(415);
        expect(JSON.parse(r.body).error.code).to.equal('UNSUPPORTED_MEDIA_TYPE');
      }
    }
    // The token still works: the rotation above never happened.
    expect((await s.post('/webhooks/service/event', { event: { name: 'lead_created', id: 'CT-1' }, context: { environment: 'prod', data_source: 'crm' } }, { account: shop })).status).to.equal(200);
    const patch = await raw(s.url, 'PATCH', `/admin/accounts/${shop.scriptId}`, { ...auth, 'content-type': 'text/plain' }, '{"enabled":false}');
    expect(patch.status).to.equal(415);
  });

  it('takes an empty application/json body as {}', async () => {
    const shop = await s.account();
    const r = await raw(s.url, 'POST', `/admin/accounts/${shop.scriptId}/rotate-token`, { ...auth, 'content-type': 'application/json' }, '');
    expect(r.status, r.body).to.equal(200);
    expect(JSON.parse(r.body).access_token).to.be.a('string');
  });

  it('refuses a CORS preflight: no Access-Control-Allow-* header on any answer', async () => {
    const u = new URL(s.url);
    const headers = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const req = request({ host: u.hostname, port: u.port, method: 'OPTIONS', path: '/admin/accounts', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.headers));
      });
      req.on('error', reject);
      req.end();
    });
    expect(Object.keys(headers).filter((h) => h.startsWith('access-control-'))).to.deep.equal([]);
  });
});

describe('admin gate: named tokens', () => {
  it('parses ADMIN_TOKENS beside ADMIN_TOKEN and refuses short tokens, bad names and repeats', () => {
    expect(parseAdminTokens('a'.repeat(16), 'ops:bbbbbbbbbbbbbbbb, ci-bot:cccccccccccccccc')).to.deep.equal([
      { name: 'admin', token: 'a'.repeat(16) }, { name: 'ops', token: 'b'.repeat(16) }, { name: 'ci-bot', token: 'c'.repeat(16) },
    ]);
    expect(parseAdminTokens(null, null)).to.deep.equal([]);
    expect(() => parseAdminTokens(null, 'ops:short')).to.throw(/ops.*16/);
    expect(() => parseAdminTokens(null, 'bbbbbbbbbbbbbbbb')).to.throw(/name:token/);
    expect(() => parseAdminTokens(null, 'o ps:bbbbbbbbbbbbbbbb')).to.throw(/name:token/);
    expect(() => parseAdminTokens('a'.repeat(16), 'admin:bbbbbbbbbbbbbbbb')).to.throw(/admin.*twice/);
    expect(() => parseAdminTokens(null, 'a:bbbbbbbbbbbbbbbb,b:bbbbbbbbbbbbbbbb')).to.throw(/another name/);
  });

  it('accepts each named token and writes its name into the admin change log line', async () => {
    const lines: any[] = [];
    const sink = new Writable({ write(chunk, _enc, cb) { for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l)); cb(); } });
    const s = await startTestApp({ ADMIN_TOKEN: TOKEN, ADMIN_TOKENS: 'alice:alice-token-0123456789,ci-bot:ci-bot-token-0123456789' }, { logger: pino({ level: 'info' }, sink) as never });
    try {
      for (const [token, name] of [[TOKEN, 'admin'], ['alice-token-0123456789', 'alice'], ['ci-bot-token-0123456789', 'ci-bot']]) {
        const r = await raw(s.url, 'POST', '/admin/accounts', { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, JSON.stringify({ name: `by ${name}` }));
        expect(r.status, r.body).to.equal(201);
        const change = lines.filter((l) => l.msg === 'admin change').at(-1);
        expect(change.admin).to.include({ action: 'account.create', author: name });
      }
      expect((await raw(s.url, 'GET', '/admin/accounts', { authorization: 'Bearer alice-token-012345678' })).status).to.equal(401);
      // A rule version published with alice's token is alice's, whatever the body says.
      const live = JSON.parse((await raw(s.url, 'GET', '/admin/rules/webhook', { authorization: 'Bearer alice-token-0123456789' })).body);
      const published = await raw(s.url, 'POST', '/admin/rules/webhook/publish', { authorization: 'Bearer alice-token-0123456789', 'content-type': 'application/json' },
        JSON.stringify({ scope: 'default', document: live.document, message: 'named', author: 'someone-else' }));
      expect(published.status, published.body).to.equal(201);
      const version = JSON.parse((await raw(s.url, 'GET', `/admin/rules/versions/${JSON.parse(published.body).version}`, auth)).body);
      expect(version).to.include({ author: 'alice', message: 'named' });
      expect(lines.filter((l) => l.msg === 'admin change').at(-1).admin).to.include({ action: 'rules.publish', author: 'alice' });
    } finally {
      await s.close();
    }
  });
});

describe('admin gate: the real server (npm start\'s entry)', () => {
  let server: SpawnedServer;
  before(async () => {
    server = await spawnServer({ DATA_DIR: tempDir('tl-gate-'), ADMIN_TOKEN: TOKEN, DATABASE_URL: '' });
  });
  after(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
  });

  it('refuses the probed spellings without a token and creates no account', async () => {
    const probes: Array<[string, string, string?]> = [
      ['GET', '/ADMIN/accounts'], ['GET', '/Admin/destinations'], ['GET', '/aDmIn/events'], ['GET', '/ADMIN/stream'],
      ['POST', '/aDmin/accounts', '{"name":"Mallory"}'], ['POST', '/ADMIN/accounts/ABCD1234/rotate-token', '{}'],
      ['POST', '/ADMIN/deliveries/replay', '{"all":true,"force":true}'], ['GET', '/admin//accounts'], ['GET', '/%61dmin/accounts'], ['GET', '/x/../admin/accounts'],
    ];
    for (const [method, path, body] of probes) {
      const r = await raw(server.url, method, path, { 'content-type': 'application/json' }, body);
      expect([401, 404], `${method} ${path} → ${r.status}`).to.include(r.status);
    }
    const accounts = await raw(server.url, 'GET', '/admin/accounts', auth);
    expect(accounts.status).to.equal(200);
    expect(JSON.parse(accounts.body).items).to.deep.equal([]);
  });
});
