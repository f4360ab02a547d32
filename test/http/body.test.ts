// What reaches the validator: method, content type, size, JSON safety.
import { expect } from 'chai';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { request } from 'node:http';
import { startTestApp, type TestApp, type TestAccount } from '../helpers/test-app.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';

const lead = { event: { name: 'lead_created', id: 'L-1' }, context: { environment: 'prod', data_source: 'crm' } };

describe('request body handling', () => {
  let s: TestApp;
  let a: TestAccount;
  before(async () => {
    s = await startTestApp({ MAX_BODY_BYTES: '65536' });
    a = await s.account();
  });
  after(() => s.close());

  const code = (r: { body: any }) => (r.body.errors?.[0]?.code ?? r.body.errors?.[0]?.split(':')[0]) as string;

  it('405 with Allow: POST for other methods', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const r = await s.post(INTAKE_PATHS.event, lead, { account: a, method });
      expect(r.status).to.equal(405);
      expect(r.headers.get('allow')).to.equal('POST');
    }
  });

  it('415 UNSUPPORTED_MEDIA_TYPE for a missing or non-JSON content type; charset is fine', async () => {
    for (const ct of ['', 'text/plain', 'application/x-www-form-urlencoded']) {
      const r = await s.post(INTAKE_PATHS.standard, lead, { account: a, headers: { 'content-type': ct } });
      expect(r.status, ct).to.equal(415);
      expect(code(r)).to.equal('UNSUPPORTED_MEDIA_TYPE');
    }
    const ok = await s.post(INTAKE_PATHS.standard, lead, { account: a, headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(ok.status).to.equal(200);
  });

  it('413 PAYLOAD_TOO_LARGE from Content-Length, before authentication', async () => {
    const big = JSON.stringify({ ...lead, event: { ...lead.event, properties: { p: 'x'.repeat(70_000) } } });
    const r = await s.post(INTAKE_PATHS.event, null, { query: 'id=ZZZZZZZZ', raw: big });
    expect(r.status).to.equal(413);
    expect(code(r)).to.equal('PAYLOAD_TOO_LARGE');
  });

  it('413 for a chunked body that crosses the limit', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${s.url}${INTAKE_PATHS.event}?id=${a.scriptId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-access-token': a.token, 'transfer-encoding': 'chunked' },
      }, (res) => { res.resume(); resolve(res.statusCode!); });
      req.on('error', reject);
      req.write('{"event":{"name":"lead_created","properties":{"p":"');
      for (let i = 0; i < 10; i++) req.write('x'.repeat(10_000));
      req.end('"}}}');
    });
    expect(status).to.equal(413);
  });

  it('413 for a gzip bomb, counted after inflation', async () => {
    const inflated = JSON.stringify({ ...lead, pad: 'a'.repeat(5_000_000) });
    const r = await s.post(INTAKE_PATHS.event, null, { account: a, raw: gzipSync(inflated), headers: { 'content-encoding': 'gzip' } });
    expect(r.status).to.equal(413);
  });

  it('accepts a gzip or deflate body within the limit', async () => {
    for (const [encoding, raw] of [['gzip', gzipSync(JSON.stringify(lead))], ['deflate', deflateSync(JSON.stringify(lead))]] as const) {
      const r = await s.post(INTAKE_PATHS.standard, null, { account: a, raw, headers: { 'content-encoding': encoding } });
      expect(r.status, encoding).to.equal(200);
    }
  });

  it('reads content-coding names in any case, x-gzip as gzip, on every intake path (case-insensitive tokens)', async () => {
    const text = JSON.stringify(lead);
    const sends: [string, Buffer | string][] = [
      ['GZIP', gzipSync(text)], ['Gzip', gzipSync(text)], [' gzip ', gzipSync(text)], ['x-gzip', gzipSync(text)], ['X-GZIP', gzipSync(text)],
      ['DEFLATE', deflateSync(text)], ['Identity', text],
    ];
    for (const [encoding, raw] of sends) {
      for (const path of [INTAKE_PATHS.event, INTAKE_PATHS.standard]) {
        const r = await s.post(path, null, { account: a, raw, headers: { 'content-encoding': encoding } });
        expect(r.status, `${encoding} on ${path}`).to.equal(200);
      }
    }
    // A mislabelled body is still refused as unreadable, whatever the case of its label.
    const wrong = await s.post(INTAKE_PATHS.standard, null, { account: a, raw: text, headers: { 'content-encoding': 'GZIP' } });
    expect(wrong.status).to.equal(400);
    expect(code(wrong)).to.equal('INVALID_BODY');
  });

  it('415 UNSUPPORTED_MEDIA_TYPE for any other Content-Encoding, valid brotli included, nothing stored', async () => {
    const before = (await s.running.store.events.list({ scriptId: a.scriptId, limit: 10_000 })).length;
    const sends: [string, string | Buffer][] = [
      ['br', brotliCompressSync(JSON.stringify(lead))],
      ['br', JSON.stringify(lead)],
      ['compress', JSON.stringify(lead)],
      ['gzip, gzip', gzipSync(gzipSync(JSON.stringify(lead)))],
      ['BR', brotliCompressSync(JSON.stringify(lead))],
      ['x-deflate', deflateSync(JSON.stringify(lead))],
      ['x-compress', JSON.stringify(lead)],
      ['gzip;q=1', gzipSync(JSON.stringify(lead))],
    ];
    for (const [encoding, raw] of sends) {
      for (const path of [INTAKE_PATHS.event, INTAKE_PATHS.standard]) {
        const r = await s.post(path, null, { account: a, raw, headers: { 'content-encoding': encoding } });
        expect(r.status, `${encoding} on ${path}`).to.equal(415);
        expect(code(r), `${encoding} on ${path}`).to.equal('UNSUPPORTED_MEDIA_TYPE');
      }
    }
    expect((await s.running.store.events.list({ scriptId: a.scriptId, limit: 10_000 })).length).to.equal(before);
  });

  const bad: [string, string, string][] = [
    ['truncated JSON', '{"event":{"name":"lead_created"', 'INVALID_JSON'],
    ['not JSON at all', 'hello', 'INVALID_JSON'],
    ['an empty body', '', 'INVALID_BODY'],
    ['whitespace only', '   ', 'INVALID_BODY'],
    ['a top-level array', '[1,2]', 'INVALID_BODY'],
    ['a top-level string', '"x"', 'INVALID_BODY'],
    ['top-level null', 'null', 'INVALID_BODY'],
    ['a 33-deep object', '{"a":'.repeat(33) + '1' + '}'.repeat(33), 'INVALID_BODY'],
    ['a deep array', '{"a":' + '['.repeat(5000) + ']'.repeat(5000) + '}', 'INVALID_BODY'],
    // Refused as too deep, not as invalid JSON: the depth is checked before the text is parsed.
    ['a deep array cut short', '{"a":' + '['.repeat(30_000), 'INVALID_BODY'],
    ['__proto__ at the top', '{"__proto__":{"polluted":1},"event":{"name":"lead_created"}}', 'INVALID_BODY'],
    ['__proto__ nested', '{"event":{"name":"lead_created","properties":{"__proto__":{"polluted":1}}}}', 'INVALID_BODY'],
    ['__proto__ spelled with escapes', '{"event":{"name":"lead_created"},"user":{"\\u005f\\u005fproto__":{"polluted":1}}}', 'INVALID_BODY'],
    ['constructor.prototype', '{"event":{"name":"lead_created","constructor":{"prototype":{"polluted":1}}}}', 'INVALID_BODY'],
    ['a "prototype" key', '{"user":{"prototype":1},"event":{"name":"lead_created"}}', 'INVALID_BODY'],
    ['1e400', '{"event":{"name":"checkout_completed","value":1e400}}', 'INVALID_BODY'],
    ['-1e400', '{"event":{"name":"checkout_completed","value":-1e400}}', 'INVALID_BODY'],
    ['NaN literal', '{"event":{"name":"checkout_completed","value":NaN}}', 'INVALID_JSON'],
    ['Infinity literal', '{"event":{"name":"checkout_completed","value":Infinity}}', 'INVALID_JSON'],
    ['2,000-element array', JSON.stringify({ ...lead, products: new Array(2000).fill(1) }), 'INVALID_BODY'],
    ['20,000-character string', JSON.stringify({ ...lead, user: { city: 'x'.repeat(20_000) } }), 'INVALID_BODY'],
    ['500 keys', JSON.stringify({ ...lead, event: { ...lead.event, properties: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, i])) } }), 'INVALID_BODY'],
  ];
  for (const [name, raw, expected] of bad) {
    for (const path of [INTAKE_PATHS.event, INTAKE_PATHS.standard]) {
      it(`400 ${expected} for ${name} on ${path}, nothing stored`, async () => {
        const before = (await s.running.store.events.list({ scriptId: a.scriptId, limit: 10_000 })).length;
        const r = await s.post(path, null, { account: a, raw });
        expect(r.status).to.equal(400);
        expect(code(r)).to.equal(expected);
        const after = (await s.running.store.events.list({ scriptId: a.scriptId, limit: 10_000 })).length;
        expect(after).to.equal(before);
      });
    }
  }

  it('leaves Object.prototype unpolluted', () => {
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
  });

  it('keeps the last value of a duplicated key (documented)', async () => {
    const r = await s.post(INTAKE_PATHS.test, null, { account: a, raw: '{"event":{"name":"lead_created","id":"A","id":"B"},"context":{"environment":"prod","data_source":"crm"}}' });
    expect(r.status).to.equal(200);
    expect(r.body.data_received.event.id).to.equal('B');
  });
});
