// The console's static route: a fixed allow-list served with a strict CSP and no-store, 404
// for everything else under /console (and for all of it when the console is off), and no
// way to reach a file outside the allow-list through the request path.
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { consoleRouter, CONSOLE_CSP, CONSOLE_FILES } from '../../src/console/console-route.ts';
import { errorFunnel } from '../../src/http/error-funnel.ts';
import type { AppState } from '../../src/http/types.ts';

const PUBLIC = new URL('../../src/console/public/', import.meta.url);

interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw request: the path goes out byte for byte (no URL normalisation of `..`). */
function get(server: Server, path: string, method = 'GET'): Promise<Res> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function serve(enabled: boolean): Promise<Server> {
  const koa = new Koa<AppState>();
  koa.silent = true;
  koa.use(errorFunnel());
  koa.use(consoleRouter({ enabled }).routes());
  const server = koa.listen(0, '127.0.0.1');
  await new Promise<void>((r) => server.once('listening', () => r()));
  return server;
}

const close = (s: Server) => new Promise<void>((r) => s.close(() => r()));

function expectSecurityHeaders(r: Res): void {
  expect(r.headers['content-security-policy']).to.equal(CONSOLE_CSP);
  expect(r.headers['x-content-type-options']).to.equal('nosniff');
  expect(r.headers['referrer-policy']).to.equal('no-referrer');
  expect(r.headers['cache-control']).to.equal('no-store');
}

describe('console route', () => {
  it('the CSP is the one the console is written for', () => {
    expect(CONSOLE_CSP).to.equal("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
  });

  describe('without ADMIN_TOKEN (enabled: false)', () => {
    let server: Server;
    before(async () => {
      server = await serve(false);
    });
    after(() => close(server));

    for (const path of ['/console', '/console/', '/console/console.js', '/console/console.css', '/console/nope']) {
      it(`GET ${path} answers 404 NOT_FOUND`, async () => {
        const r = await get(server, path);
        expect(r.status).to.equal(404);
        expect(r.headers['content-type']).to.match(/^application\/json/);
        expect(JSON.parse(r.body).error).to.include({ code: 'NOT_FOUND' });
        expectSecurityHeaders(r);
      });
    }
  });

  describe('with ADMIN_TOKEN (enabled: true)', () => {
    let server: Server;
    before(async () => {
      server = await serve(true);
    });
    after(() => close(server));

    it('GET /console is the page, as HTML, with the security headers', async () => {
      const r = await get(server, '/console');
      expect(r.status).to.equal(200);
      expect(r.headers['content-type']).to.equal('text/html; charset=utf-8');
      expectSecurityHeaders(r);
      expect(r.body).to.contain('<script type="module" src="/console/console.js"></script>');
      expect(r.body).to.contain('id="token-form"');
    });

    it('serves every allow-listed file with its content type and the same bytes as on disk', async () => {
      const types: Record<string, string> = { html: 'text/html; charset=utf-8', js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };
      for (const [path, { file }] of Object.entries(CONSOLE_FILES)) {
        const r = await get(server, path);
        expect(r.status, path).to.equal(200);
        expect(r.headers['content-type'], path).to.equal(types[file.split('.').pop()!]);
        expect(r.body, path).to.equal(readFileSync(new URL(file, PUBLIC), 'utf8'));
        expectSecurityHeaders(r);
      }
    });

    it('the allow-list is exactly the files in public/ (a new module must be listed to be served)', () => {
      const listed = Object.values(CONSOLE_FILES).map((f) => f.file).sort();
      expect(readdirSync(PUBLIC).sort()).to.deep.equal(listed);
    });

    it('an unknown console path or another method answers 404 NOT_FOUND', async () => {
      for (const path of ['/console/nope.js', '/console/index.html', '/console/console.js.map', '/console/public/console.js']) {
        const r = await get(server, path);
        expect(r.status, path).to.equal(404);
        expect(JSON.parse(r.body).error.code, path).to.equal('NOT_FOUND');
        expectSecurityHeaders(r);
      }
      const post = await get(server, '/console', 'POST');
      expect(post.status).to.equal(404);
    });

    it('no path reaches a file outside the allow-list (traversal, encoded or not)', async () => {
      const attempts = [
        '/console/../package.json',
        '/console/../../package.json',
        '/console/%2e%2e/package.json',
        '/console/%2e%2e%2fpackage.json',
        '/console/..%2f..%2fpackage.json',
        '/console/%252e%252e%252fpackage.json',
        '/console/console.js/../../../package.json',
        '/console//etc/passwd',
        '/console/..\\..\\package.json',
        '/console/%00console.js',
        '/console/console-route.ts',
        '/console/..%2fconsole-route.ts',
      ];
      for (const path of attempts) {
        const r = await get(server, path);
        expect(r.status, path).to.equal(404);
        expect(r.body, path).not.to.contain('"devDependencies"');
        expect(r.body, path).not.to.contain('root:');
        expect(r.body, path).not.to.contain('consoleRouter');
      }
    });
  });

  describe('the page set keeps to the CSP and never turns data into markup', () => {
    const files = readdirSync(PUBLIC);
    const read = (f: string) => readFileSync(new URL(f, PUBLIC), 'utf8');

    it('no script builds HTML from strings or evaluates code', () => {
      for (const f of files.filter((n) => n.endsWith('.js'))) {
        const src = read(f);
        for (const banned of ['innerHTML', 'outerHTML', 'insertAdjacentHTML', 'document.write', 'eval(', 'new Function', 'EventSource', 'localStorage', '.style.', 'setAttribute(\'style\'']) {
          expect(src, `${f} uses ${banned}`).not.to.contain(banned);
        }
      }
    });

    it('the page has no inline script, style or event handler', () => {
      const html = read('index.html');
      expect(html).not.to.match(/<script(?![^>]*\bsrc=)[^>]*>/i);
      expect(html).not.to.match(/<style/i);
      expect(html).not.to.match(/\sstyle=/i);
      expect(html).not.to.match(/\son[a-z]+=/i);
      expect(html).not.to.match(/javascript:/i);
    });
  });
});

// The page's pure helpers run in Node as well (fetch, Response and TextDecoderStream are
// globals there); imported by URL because the type-checker does not read the page's .js.
describe('console helpers: the event-stream parser and the JSON error locator', () => {
  const load = async (file: string) => import(new URL(file, PUBLIC).href) as Promise<Record<string, (...args: any[]) => any>>;

  /** A Response whose body arrives in exactly these chunks. */
  function chunked(chunks: string[]): Response {
    const enc = new TextEncoder();
    return new Response(new ReadableStream({
      start(c) {
        for (const ch of chunks) c.enqueue(enc.encode(ch));
        c.close();
      },
    }));
  }

  it('reads messages split anywhere, CRLF and CR line ends, comments, multi-line data; ignores a trailing partial message', async () => {
    const { readEvents } = await load('api.js');
    const got: { event: string; data: string }[] = [];
    await readEvents(chunked([
      'retry: 2000\n: connected\n\n',
      'event: intake\ndata: {"id":"a"',
      ',"n":1}\n\nevent: intake\r',
      '\ndata: {"id":"b"}\r\n\r\n',
      ': keep-alive\n\n',
      'event: overflow\rdata: {"missed":3}\r\r',
      'data: line one\ndata: line two\n\n',
      'event: intake\ndata: {"id":"never finished"}\n',
    ]), (m: { event: string; data: string }) => got.push({ event: m.event, data: m.data }));
    expect(got).to.deep.equal([
      { event: 'intake', data: '{"id":"a","n":1}' },
      { event: 'intake', data: '{"id":"b"}' },
      { event: 'overflow', data: '{"missed":3}' },
      { event: 'message', data: 'line one\nline two' },
    ]);
  });

  it('locates a JSON syntax error by line and column, and agrees with JSON.parse on what is valid', async () => {
    const { jsonErrorOffset, lineColumn } = await load('json-position.js');
    const at = (text: string) => {
      const o = jsonErrorOffset(text);
      return o === null ? null : lineColumn(text, o);
    };
    expect(at('{\n  "destination": "webhook",\n  "rules": [,]\n}')).to.deep.equal({ line: 3, column: 13 });
    expect(at('{"a": 1,}')).to.deep.equal({ line: 1, column: 9 });
    expect(at('{"a": "\\x"}')).to.deep.equal({ line: 1, column: 9 });
    expect(at('{"a": 1}\n  x')).to.deep.equal({ line: 2, column: 3 });
    expect(at('')).to.deep.equal({ line: 1, column: 1 });
    const samples = ['{}', '[]', ' {"a": [1, -2.5e3, true, false, null, "\\u00e9\\n"], "b": {}} ', '01', '[1 2]', '{"a" 1}', '"abc', '[1,]', 'nul', '{"a":1}}', '-', '1.', '"\t"'];
    for (const s of samples) {
      let valid = true;
      try {
        JSON.parse(s);
      } catch {
        valid = false;
      }
      expect(jsonErrorOffset(s) === null, JSON.stringify(s)).to.equal(valid);
    }
  });
});
