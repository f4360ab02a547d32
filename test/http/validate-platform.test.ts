// Endpoint 2's `?validate=platform`: each previewed request is sent to its platform's
// validation path — GA4's /debug/mp/collect, Google Ads with validateOnly, Meta only with the
// destination's test code — and the platform's verdict goes beside the preview. Loopback
// doubles answer as the platforms document. Without the flag nothing leaves the service; a
// double that never answers is a `timeout` within the 3 s budget; a loopback destination
// without ALLOW_PRIVATE_DESTINATIONS is refused by the delivery's address check.
import { expect } from 'chai';
import { startTestApp, type TestApp, type TestAccount } from '../helpers/test-app.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { startDestinationDouble, type DestinationDouble, type RecordedRequest, type ScriptedResponse } from '../helpers/destination-double.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { createDestinationService } from '../../src/destinations/destination-service.ts';
import { USER_AGENT } from '../../src/delivery/net/user-agent.ts';
import { checkout, SETTINGS } from '../delivery/delivery-fixture.ts';

const ORDER = checkout('ORD-V1', {
  context: { environment: 'prod', data_source: 'website', url: 'https://shop.example.com/thanks?gclid=Cj0KCQ-test', user_agent: 'Mozilla/5.0 test' },
});

/** GA4's documented answer for an event it calls invalid. */
const GA4_INVALID = { validationMessages: [{ fieldPath: 'events', description: 'Event at index: [0] has invalid name [_bad]. Names must start with an alphabetic character.', validationCode: 'NAME_INVALID' }] };

/** One double for every destination: it answers by path. */
function answerByPath(dbl: DestinationDouble, answers: Record<string, ScriptedResponse>): void {
  dbl.otherwise((req: RecordedRequest) => answers[Object.keys(answers).find((p) => req.path.startsWith(p)) ?? ''] ?? { status: 200, body: {} });
}

const byType = (preview: any[]) => Object.fromEntries(preview.map((p) => [p.type, p]));

/** Mocha hooks: a service (`start`) and one destination double for the describe block, closed after it. */
function withDouble<T extends TestApp | TestServer>(start: () => Promise<T>): { readonly s: T; readonly dbl: DestinationDouble } {
  let s: T | undefined;
  let dbl: DestinationDouble | undefined;
  before(async () => {
    s = await start();
    dbl = await startDestinationDouble();
  });
  after(async () => {
    await s?.close();
    await dbl?.close();
  });
  return {
    get s() {
      return s!;
    },
    get dbl() {
      return dbl!;
    },
  };
}

describe('endpoint 2: ?validate=platform asks each platform about the previewed requests', function () {
  this.timeout(30_000);
  const t = withDouble(() => startTestApp({ ALLOW_PRIVATE_DESTINATIONS: '1' }));
  let dbl: DestinationDouble;
  let a: TestAccount;

  beforeEach(async () => {
    dbl = t.dbl;
    dbl.requests.length = 0;
    a = await t.s.account({ country: 'RO' });
  });

  const connect = async (account: TestAccount, types: string[], extra: Record<string, Record<string, unknown>> = {}) => {
    const svc = createDestinationService(t.s.running.store, t.s.running.plugins);
    for (const type of types) await svc.add(account.scriptId, type, { ...SETTINGS[type](dbl.url), ...extra[type] });
  };
  const test = (query: string) => t.s.post(INTAKE_PATHS.test, ORDER, { account: a, query: `id=${a.scriptId}${query}` });

  it('GA4 valid and Google Ads valid: sent to /debug/mp/collect and with validateOnly, secrets sent but never shown; Meta without a test code and LinkedIn not_available', async () => {
    await connect(a, ['ga4', 'google-ads', 'meta-capi', 'linkedin']);
    answerByPath(dbl, { '/debug/mp/collect': { status: 200, body: { validationMessages: [] } } });
    const r = await test('&validate=platform');
    expect(r.status).to.equal(200);
    const p = byType(r.body.preview);

    expect(p.ga4.status).to.equal('would_send');
    expect(p.ga4.requests[0].url, 'the preview is unchanged: the production request, masked').to.match(/\/mp\/collect\?measurement_id=G-TEST123&api_secret=\*\*\*\*$/);
    expect(p.ga4.validation).to.deep.include({ verdict: 'valid', messages: [] });
    expect(p.ga4.validation.requests).to.have.length(1);
    expect(p.ga4.validation.requests[0]).to.include({ verdict: 'valid', status: 200 });
    expect(p['google-ads'].validation).to.deep.include({ verdict: 'valid', messages: [] });
    expect(p['meta-capi'].validation).to.deep.equal({
      verdict: 'not_available', requests: [],
      messages: ['Meta checks events only when they carry a test_event_code (Events Manager, Test events) and this destination has none: the request would record a real conversion'],
    });
    expect(p.linkedin.validation.verdict).to.equal('not_available');
    expect(p.linkedin.validation.messages[0]).to.match(/^linkedin has no test mode or validation path \(/);

    const paths = dbl.requests.map((q) => q.path).sort();
    expect(paths).to.deep.equal(['/debug/mp/collect?measurement_id=G-TEST123&api_secret=ga-secret', '/v26/customers/1234567890:uploadClickConversions']);
    const ads = dbl.requests.find((q) => q.path.includes(':upload'))!;
    expect(ads.json()).to.include({ partialFailure: true, validateOnly: true });
    expect(ads.headers.authorization).to.equal('Bearer ads-token');
    for (const q of dbl.requests) expect(q.headers['user-agent'], q.path).to.equal(USER_AGENT);
    for (const secret of ['ga-secret', 'ads-token', 'ads-dev-token', 'meta-token', 'li-token']) expect(r.text).to.not.contain(secret);
  });

  it('GA4 invalid: the validation messages are the verdict\'s', async () => {
    await connect(a, ['ga4']);
    answerByPath(dbl, { '/debug/mp/collect': { status: 200, body: GA4_INVALID } });
    const r = await test('&validate=platform');
    const { validation } = byType(r.body.preview).ga4;
    const message = 'GA4 validation failed: NAME_INVALID at events: Event at index: [0] has invalid name [_bad]. Names must start with an alphabetic character.';
    expect(validation.verdict).to.equal('invalid');
    expect(validation.messages).to.deep.equal([message]);
    expect(validation.requests[0]).to.include({ verdict: 'invalid', status: 200 });
  });

  it('Meta with the destination\'s test code: sent with it, and the platform\'s refusal is invalid', async () => {
    await connect(a, ['meta-capi'], { 'meta-capi': { test_event_code: 'TEST4242' } });
    answerByPath(dbl, { '/v': { status: 400, body: { error: { message: 'Invalid parameter', type: 'OAuthException', code: 100, error_subcode: 2804003 } } } });
    const r = await test('&validate=platform');
    expect(dbl.requests).to.have.length(1);
    expect(dbl.requests[0].json().test_event_code).to.equal('TEST4242');
    expect(byType(r.body.preview)['meta-capi'].validation.verdict).to.equal('invalid');
  });

  it('a double that never answers is a timeout within the 3 s budget; the others still get their verdict', async () => {
    await connect(a, ['ga4', 'google-ads']);
    answerByPath(dbl, { '/debug/mp/collect': { hang: true } });
    const r = await test('&validate=platform');
    const p = byType(r.body.preview);
    expect(p.ga4.validation).to.deep.include({ verdict: 'timeout', messages: ['no answer within 3 s'] });
    expect(p.ga4.validation.requests[0]).to.include({ verdict: 'timeout', status: null });
    expect(p['google-ads'].validation.verdict).to.equal('valid');
  });

  it('without the flag nothing leaves the service; another value of validate is refused', async () => {
    await connect(a, ['ga4', 'google-ads', 'webhook', 'snapchat', 'pinterest']);
    const r = await test('');
    expect(r.status).to.equal(200);
    for (const p of r.body.preview) {
      expect(p.status, p.type).to.equal('would_send');
      expect(p, p.type).to.not.have.property('validation');
    }
    const bad = await test('&validate=yes');
    expect(bad.status).to.equal(400);
    expect(bad.body.errors[0]).to.match(/^INVALID_VALUE: validate must be platform/);
    // Endpoint 2 answers after every check it sends has its verdict: none may have gone out.
    expect(dbl.requests).to.deep.equal([]);
  });
});

describe('endpoint 2: ?validate=platform respects ALLOW_PRIVATE_DESTINATIONS', function () {
  this.timeout(30_000);
  const t = withDouble(() => startTestApp());

  it('a destination on loopback (saved before the flag was turned off) is refused by the delivery\'s address check: error, nothing sent', async () => {
    const { s, dbl } = t;
    const a = await s.account({ country: 'RO' });
    // Saved without the save-time check, as a destination stored while private addresses were allowed.
    await createDestinationService(s.running.store, s.running.plugins).add(a.scriptId, 'ga4', SETTINGS.ga4(dbl.url));
    const r = await s.post(INTAKE_PATHS.test, ORDER, { account: a, query: `id=${a.scriptId}&validate=platform` });
    const { validation } = r.body.preview[0];
    expect(validation.verdict).to.equal('error');
    expect(validation.messages).to.deep.equal(['destination not allowed: address 127.0.0.1 is loopback']);
    expect(dbl.requests).to.deep.equal([]);
  });
});

describe('endpoint 2: ?validate=platform with previews planned on a preview thread', function () {
  this.timeout(60_000);
  const t = withDouble(() => startTestServer({ PREVIEW_THREADS: '1', ALLOW_PRIVATE_DESTINATIONS: '1' }));

  it('the thread builds the validation requests, the HTTP thread sends them: the same verdicts', async () => {
    const { s, dbl } = t;
    const a = await s.account({ country: 'RO' });
    await createDestinationService(s.running.store, s.running.plugins).add(a.scriptId, 'ga4', SETTINGS.ga4(dbl.url));
    answerByPath(dbl, { '/debug/mp/collect': { status: 200, body: GA4_INVALID } });
    const r = await s.post(INTAKE_PATHS.test, ORDER, { account: a, query: `id=${a.scriptId}&validate=platform` });
    expect(r.body.preview[0].validation.verdict).to.equal('invalid');
    expect(dbl.requests.map((q) => q.path)).to.deep.equal(['/debug/mp/collect?measurement_id=G-TEST123&api_secret=ga-secret']);
  });
});
