// Endpoint 4 over real HTTP: the documented order of checks (docs/api.md), tier gating, unbound and
// unknown endpoints, env handling, the intake refusals in the custom body shape, both
// envs' effects on the store, handler failures, per-endpoint rate limits and 503.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { pathToFileURL } from 'node:url';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/test-app.ts';
import { sqliteFile } from '../../src/store/open-store.ts';
import { openCustomRecordStore } from '../../src/store/sqlite/custom-records.ts';
import { customersRoot, writeEndpoint } from './fixtures.ts';

const VALIDATION_ERROR_MODULE = pathToFileURL(new URL('../../src/customers/custom-validation-error.ts', import.meta.url).pathname).href;
const API_KEY = 'k-route-test-0123456789';

describe('custom endpoints: the route', () => {
  let root: string;
  let s: TestApp;
  let acme: TestAccount;

  before(async () => {
    root = customersRoot();
    writeEndpoint(root, 'acme', 'leads', {
      config: { description: 'leads', rate_limit: { test: { per_minute: 600, burst: 2 }, production: { per_minute: 600, burst: 50 } } },
    });
    writeEndpoint(root, 'acme', 'keyed', {
      config: { description: 'keyed', auth: [{ type: 'api_key', key_sha256: [createHash('sha256').update(API_KEY).digest('hex')] }] },
    });
    writeEndpoint(root, 'acme', 'throws', { handler: `export default () => { throw new Error('secret detail 42'); };` });
    writeEndpoint(root, 'acme', 'broken-result', { handler: `export default () => ({ events: 'x', messages: [], recordsProcessed: 1 });` });
    writeEndpoint(root, 'acme', 'refuses', {
      handler: `import { customValidationError } from '${VALIDATION_ERROR_MODULE}';
export default (body: { n: number }) => {
  if (body.n > 5) throw customValidationError('n', 'a number from 1 to 5 on Sundays', 'n is too large today');
  return { events: [], messages: ['fine'], recordsProcessed: 0 };
};`,
    });
    writeEndpoint(root, 'acme', 'bad-events', {
      handler: `export default (body: { n: number }) => ({
  events: [
    { event: { name: 'checkout_completed', id: 'B-' + body.n, value: 10, currency: 'EURO' }, context: { environment: 'prod' } },
    { event: { name: 'lead_created', id: 'G-' + body.n }, context: { environment: 'prod', data_source: 'crm' }, consent: { analytics: true, personalization: true, marketing: true } },
  ],
  messages: [],
  recordsProcessed: 2,
});`,
    });
    writeEndpoint(root, 'acme', 'all-bad', {
      handler: `export default (body: { n: number }) => ({
  events: [{ event: { name: 'checkout_completed', id: 'X-' + body.n, value: 10, currency: 'EURO' }, context: { environment: 'prod' } }],
  records: [{ type: 'row', key: 'r' + body.n, data: { n: body.n } }],
  messages: [],
  recordsProcessed: 1,
});`,
    });
    writeEndpoint(root, 'other', 'only-other');
    s = await startTestApp({ CUSTOMERS_DIR: root });
    acme = await account('CUSTOM', 'acme');
  });
  after(async () => {
    await s.close();
    rmSync(root, { recursive: true, force: true });
  });

  async function account(tier: string, customer: string | null): Promise<TestAccount> {
    const a = await s.account({ tier, addon: false });
    if (customer !== null) await s.accounts.update(a.scriptId, { customer });
    return a;
  }
  const post = (name: string, body: unknown, a: TestAccount = acme, env?: string, headers: Record<string, string> = {}) =>
    s.post(`/service/custom/${name}`, body, { account: a, query: `id=${a.scriptId}${env === undefined ? '' : `&env=${env}`}`, headers });

  const refusal = (code: string, message: string, field = '', expected = '') => ({
    result: 'error',
    messages: [message],
    error_code: code,
    error_context: { field, expected_format: expected },
  });

  describe('order of checks', () => {
    it('credentials first: 401 before the tier is looked at', async () => {
      const pro = await account('PRO', 'acme');
      const wrong = await post('leads', { n: 1 }, { ...pro, token: 'tlk_wrong' });
      expect(wrong.status).to.equal(401);
      expect(wrong.body).to.deep.equal(refusal('INVALID_CREDENTIALS', 'The script id and access token do not match an active credential'));
      const missing = await s.post('/service/custom/leads', { n: 1 }, { query: '' });
      expect(missing.status).to.equal(401);
      expect(missing.body.error_code).to.equal('AUTH_MISSING');
    });

    for (const tier of ['BASIC', 'FLEX', 'PRO']) {
      it(`tier ${tier}: 403 PLAN_NOT_ELIGIBLE, also when bound and the endpoint exists`, async () => {
        const a = await account(tier, 'acme');
        const r = await post('leads', { n: 1 }, a);
        expect(r.status).to.equal(403);
        expect(r.body).to.deep.equal(refusal('PLAN_NOT_ELIGIBLE', `Custom endpoints need the CUSTOM plan; this account is on ${tier}`));
      });
    }

    it('a disabled CUSTOM account: 403 ACCESS_NOT_ENABLED', async () => {
      const a = await account('CUSTOM', 'acme');
      await s.accounts.update(a.scriptId, { enabled: false });
      const r = await post('leads', { n: 1 }, a);
      expect(r.status).to.equal(403);
      expect(r.body.error_code).to.equal('ACCESS_NOT_ENABLED');
    });

    it('tier before endpoint: a PRO account asking for an unknown endpoint gets 403, not 404', async () => {
      const r = await post('nope', { n: 1 }, await account('PRO', null));
      expect(r.status).to.equal(403);
    });

    it('unbound, unknown, another customer\'s, or a folder that is not loaded: the same 404', async () => {
      const unbound = await account('CUSTOM', null);
      const ghost = await account('CUSTOM', 'ghost');
      const cases = await Promise.all([
        post('leads', { n: 1 }, unbound),
        post('nope', { n: 1 }),
        post('only-other', { n: 1 }),
        post('leads', { n: 1 }, ghost),
      ]);
      for (const r of cases) {
        expect(r.status).to.equal(404);
        expect(r.body.error_code).to.equal('ENDPOINT_NOT_FOUND');
        expect(r.body.error_context).to.deep.equal({ field: '', expected_format: '' });
      }
      expect(cases[0].body).to.deep.equal(refusal('ENDPOINT_NOT_FOUND', 'This account has no custom endpoint named "leads"'));
      expect(cases[3].body).to.deep.equal(cases[0].body);
      const nested = await s.post('/service/custom/leads/extra', { n: 1 }, { account: acme });
      expect(nested.status).to.equal(404);
      expect(nested.body.error_code).to.equal('ENDPOINT_NOT_FOUND');
    });

    it('endpoint before its extra auth: an unbound account gets 404 even without the API key', async () => {
      const r = await post('keyed', { n: 1 }, await account('CUSTOM', null));
      expect(r.status).to.equal(404);
    });

    it('extra auth before body validation: an invalid body without the key is 401, with it 400', async () => {
      const noKey = await post('keyed', { n: 'x' });
      expect(noKey.status).to.equal(401);
      expect(noKey.body).to.deep.equal(refusal('AUTH_MISSING', 'The X-Api-Key header is missing', 'X-Api-Key'));
      const withKey = await post('keyed', { n: 'x' }, acme, undefined, { 'x-api-key': API_KEY });
      expect(withKey.status).to.equal(400);
      expect(withKey.body.error_code).to.equal('CUSTOM_VALIDATION_ERROR');
    });
  });

  describe('intake refusals keep the custom shape', () => {
    it('405 for GET with Allow: POST', async () => {
      const r = await s.post('/service/custom/leads', undefined, { account: acme, method: 'GET' });
      expect(r.status).to.equal(405);
      expect(r.headers.get('allow')).to.equal('POST');
      expect(r.body).to.deep.equal(refusal('METHOD_NOT_ALLOWED', 'Use POST on /service/custom/leads'));
    });
    it('415 without application/json', async () => {
      const r = await s.post('/service/custom/leads', { n: 1 }, { account: acme, headers: { 'content-type': 'text/plain' } });
      expect(r.status).to.equal(415);
      expect(r.body.error_code).to.equal('UNSUPPORTED_MEDIA_TYPE');
    });
    it('413 for a body over MAX_BODY_BYTES', async () => {
      const r = await post('leads', { n: 1, note: 'x'.repeat(600_000) });
      expect(r.status).to.equal(413);
      expect(r.body.error_code).to.equal('PAYLOAD_TOO_LARGE');
    });
    it('400 INVALID_JSON, INVALID_BODY for an array and for __proto__', async () => {
      const bad = await s.post('/service/custom/leads', null, { account: acme, raw: '{"n":' });
      expect(bad.status).to.equal(400);
      expect(bad.body.error_code).to.equal('INVALID_JSON');
      expect(bad.body.result).to.equal('error');
      const arr = await post('leads', [{ n: 1 }]);
      expect(arr.body.error_code).to.equal('INVALID_BODY');
      const proto = await s.post('/service/custom/leads', null, { account: acme, raw: '{"n":1,"__proto__":{"x":1}}' });
      expect(proto.status).to.equal(400);
      expect(proto.body.error_code).to.equal('INVALID_BODY');
    });
    it('400 INVALID_BODY for a body nested too deep, refused before it is parsed; 415 for a br body', async () => {
      const deep = await s.post('/service/custom/leads', null, { account: acme, raw: `{"n":1,"x":${'['.repeat(50_000)}` });
      expect(deep.status).to.equal(400);
      expect(deep.body.error_code).to.equal('INVALID_BODY');
      expect(deep.body.messages[0]).to.match(/nested deeper than 32 levels/);
      const br = await s.post('/service/custom/leads', null, { account: acme, raw: JSON.stringify({ n: 1 }), headers: { 'content-encoding': 'br' } });
      expect(br.status).to.equal(415);
      expect(br.body.error_code).to.equal('UNSUPPORTED_MEDIA_TYPE');
    });
  });

  describe('body validation', () => {
    it('400 CUSTOM_VALIDATION_ERROR with field and expected_format in words; every problem in messages', async () => {
      const r = await post('leads', { n: 0, note: 'far too long a note', extra: true });
      expect(r.status).to.equal(400);
      expect(r.body).to.deep.equal({
        result: 'error',
        messages: [
          'extra is not a known field',
          'n must be a whole number from 1 to 99',
          'note must be a string of at most 10 characters',
        ],
        error_code: 'CUSTOM_VALIDATION_ERROR',
        error_context: { field: 'extra', expected_format: 'no such field; the allowed fields here are n, note' },
      });
    });
    it('a wrong type says what it got', async () => {
      const r = await post('leads', { n: '3' });
      expect(r.body.messages).to.deep.equal(['n must be a whole number, got a string']);
      expect(r.body.error_context).to.deep.equal({ field: 'n', expected_format: 'a whole number from 1 to 99' });
    });
    it('a missing field names it and what it must be', async () => {
      const r = await post('leads', {});
      expect(r.body.error_context).to.deep.equal({ field: 'n', expected_format: 'a whole number from 1 to 99' });
      expect(r.body.messages).to.deep.equal(['n is required']);
    });
  });

  describe('env', () => {
    it('env=test runs the handler, reports, and stores nothing', async () => {
      const r = await post('leads', { n: 7 }, acme, 'test');
      expect(r.status).to.equal(200);
      expect(r.body.result).to.equal('ok');
      expect(r.body.messages).to.deep.equal(['got 7', 'test mode: nothing was stored or delivered']);
      const d = r.body.custom_data;
      // No context.url: the account host stands in, with a URL_FALLBACK warning.
      expect(d).to.include({ records_processed: 1, validation_status: 'valid_with_warnings', env: 'test' });
      // A measured duration, not a speed requirement (no timing bounds in tests).
      expect(d.processing_time_ms).to.be.a('number').and.at.least(0);
      expect(d.records).to.deep.equal([{ type: 'fixture_row', key: 'n7', data: { n: 7, env: 'test' } }]);
      expect(d.events).to.have.length(1);
      expect(d.events[0]).to.include({ name: 'lead_created', event_id: 'L-7', status: 'would_accept' });
      expect(d.events[0].errors).to.deep.equal([]);
      expect(d.events[0].preview).to.deep.equal([]);
      expect(d.events[0].data_normalized.event).to.include({ name: 'lead_created', id: 'L-7' });
      expect(await s.running.store.events.list({ scriptId: acme.scriptId, eventId: 'L-7' })).to.deep.equal([]);
    });

    it('no env means production: events committed before the 200, records too; a repeat is a duplicate and replaces the record', async () => {
      const r = await post('leads', { n: 8 });
      expect(r.status).to.equal(200);
      expect(r.body).to.deep.equal({
        result: 'ok',
        messages: ['got 8'],
        custom_data: {
          processing_time_ms: r.body.custom_data.processing_time_ms,
          records_processed: 1,
          validation_status: 'valid_with_warnings',
          env: 'production',
          events: [{ name: 'lead_created', event_id: 'L-8', status: 'accepted' }],
          records_stored: 1,
        },
      });
      const [stored] = await s.running.store.events.list({ scriptId: acme.scriptId, eventId: 'L-8' });
      expect(stored).to.include({ name: 'lead_created', status: 'accepted', source: 'custom:leads' });
      const again = await post('leads', { n: 8 }, acme, 'production');
      expect(again.body.custom_data.events[0].status).to.equal('duplicate');
      expect(again.body.messages[1]).to.equal('event 1 (lead_created L-8): duplicate of an event already received; not forwarded again');
      const records = openCustomRecordStore(sqliteFile(s.config));
      try {
        const rows = (await records.list({ scriptId: acme.scriptId })).filter((x) => x.key === 'n8');
        expect(rows).to.have.length(1);
        expect(rows[0]).to.include({ customer: 'acme', endpoint: 'leads', type: 'fixture_row' });
        expect(rows[0].data).to.deep.equal({ n: 8, env: 'production' });
      } finally {
        await records.close();
      }
    });

    it('env other than production or test: 400 naming env', async () => {
      for (const q of ['env=staging', 'env=test&env=test']) {
        const r = await s.post('/service/custom/leads', { n: 1 }, { account: acme, query: `id=${acme.scriptId}&${q}` });
        expect(r.status).to.equal(400);
        expect(r.body.error_context).to.deep.equal({ field: 'env', expected_format: 'production or test, given once (default production)' });
      }
    });
  });

  describe('handlers', () => {
    it('a handler that throws is a 500 that reveals nothing', async () => {
      const r = await post('throws', { n: 1 });
      expect(r.status).to.equal(500);
      expect(r.body).to.deep.equal(refusal('INTERNAL_ERROR', 'Internal error'));
      expect(r.text).to.not.include('secret detail');
    });
    it('a handler breaking the result contract is a 500', async () => {
      const r = await post('broken-result', { n: 1 }, acme, 'test');
      expect(r.status).to.equal(500);
    });
    it('customValidationError from a handler is a 400 with its field and words', async () => {
      const ok = await post('refuses', { n: 3 });
      expect(ok.status).to.equal(200);
      const r = await post('refuses', { n: 9 });
      expect(r.status).to.equal(400);
      expect(r.body).to.deep.equal({
        result: 'error',
        messages: ['n is too large today'],
        error_code: 'CUSTOM_VALIDATION_ERROR',
        error_context: { field: 'n', expected_format: 'a number from 1 to 5 on Sundays' },
      });
    });
    it('produced events are validated like endpoint 1: an invalid one is reported and stored as rejected, the valid one accepted', async () => {
      const t = await post('bad-events', { n: 1 }, acme, 'test');
      expect(t.status).to.equal(200);
      expect(t.body.custom_data.validation_status).to.equal('partially_rejected');
      expect(t.body.custom_data.events.map((e: any) => e.status)).to.deep.equal(['would_reject', 'would_accept']);
      expect(t.body.custom_data.events[0].errors[0]).to.match(/^INVALID_FORMAT: event\.currency: /);
      expect(t.body.messages[0]).to.match(/^event 1 \(checkout_completed B-1\): rejected: INVALID_FORMAT: event\.currency: /);

      const p = await post('bad-events', { n: 2 });
      expect(p.body.custom_data.events).to.deep.equal([
        { name: 'checkout_completed', event_id: 'B-2', status: 'rejected' },
        { name: 'lead_created', event_id: 'G-2', status: 'accepted' },
      ]);
      const [rejected] = await s.running.store.events.list({ scriptId: acme.scriptId, eventId: 'B-2' });
      expect(rejected.status).to.equal('rejected');
      expect(rejected.errors[0].field).to.equal('event.currency');
    });
  });

  describe('every produced event rejected', () => {
    it('answers 400 CUSTOM_VALIDATION_ERROR naming each error, and stores neither the events nor the records', async () => {
      for (const env of ['production', 'test'] as const) {
        const r = await post('all-bad', { n: 5 }, acme, env);
        expect(r.status, env).to.equal(400);
        expect(r.body.result).to.equal('error');
        expect(r.body.error_code).to.equal('CUSTOM_VALIDATION_ERROR');
        expect(r.body.error_context.field).to.equal('events[0].event.currency');
        expect(r.body.error_context.expected_format).to.equal('a valid checkout_completed event (INVALID_FORMAT)');
        expect(r.body.messages[0]).to.match(/^event 1 \(checkout_completed X-5\): rejected: INVALID_FORMAT: event\.currency: /);
      }
      expect(await s.running.store.events.list({ scriptId: acme.scriptId, eventId: 'X-5' })).to.deep.equal([]);
      const records = openCustomRecordStore(sqliteFile(s.config));
      try {
        expect((await records.list({ scriptId: acme.scriptId })).filter((x) => x.key === 'r5')).to.deep.equal([]);
      } finally {
        await records.close();
      }
    });
  });

  describe('rate limits', () => {
    it('per endpoint and env: over the burst → 429 with Retry-After; the other env is untouched; refills with time', async () => {
      const a = await account('CUSTOM', 'acme');
      // Warm both handler threads first: a thread starting mid-test takes longer than a refill.
      await Promise.all([post('leads', { n: 1 }, acme, 'production'), post('leads', { n: 2 }, acme, 'production')]);
      const first = await Promise.all([post('leads', { n: 1 }, a, 'test'), post('leads', { n: 1 }, a, 'test')]);
      for (const r of first) expect(r.status).to.equal(200);
      const over = await post('leads', { n: 1 }, a, 'test');
      expect(over.status).to.equal(429);
      expect(over.headers.get('retry-after')).to.equal('1');
      expect(over.body).to.deep.equal(refusal('RATE_LIMITED', 'More than 600 requests per minute to this endpoint (test); retry after 1 s'));
      expect((await post('leads', { n: 11 }, a, 'production')).status).to.equal(200);
      expect((await post('leads', { n: 1 }, acme, 'test')).status, 'another account has its own bucket').to.equal(200);
      // 600 per minute: one token every 100 ms.
      await new Promise((r) => setTimeout(r, 150));
      expect((await post('leads', { n: 1 }, a, 'test')).status).to.equal(200);
    });
  });

});

describe('custom endpoints: store failure', () => {
  let root: string;
  let s: TestApp;
  let a: TestAccount;
  before(async () => {
    root = customersRoot();
    writeEndpoint(root, 'acme', 'leads');
    s = await startTestApp({ CUSTOMERS_DIR: root }, { busyTimeoutMs: 50 });
    a = await s.account({ tier: 'CUSTOM' });
    await s.accounts.update(a.scriptId, { customer: 'acme' });
  });
  after(async () => {
    await s.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('503 UNAVAILABLE with Retry-After when the commit fails, nothing half-stored; the retry succeeds', async () => {
    const blocker = new Database(sqliteFile(s.config));
    blocker.exec('BEGIN EXCLUSIVE');
    try {
      const r = await s.post('/service/custom/leads', { n: 5 }, { account: a });
      expect(r.status).to.equal(503);
      expect(r.headers.get('retry-after')).to.equal('5');
      expect(r.body).to.deep.equal({
        result: 'error',
        messages: ['The service cannot store events right now; retry later'],
        error_code: 'UNAVAILABLE',
        error_context: { field: '', expected_format: '' },
      });
    } finally {
      blocker.exec('ROLLBACK');
      blocker.close();
    }
    expect(await s.running.store.events.list({ scriptId: a.scriptId })).to.deep.equal([]);
    const again = await s.post('/service/custom/leads', { n: 5 }, { account: a });
    expect(again.status).to.equal(200);
    expect(again.body.custom_data.events[0].status).to.equal('accepted');
  });
});
