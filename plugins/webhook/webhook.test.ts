import { createHmac, timingSafeEqual } from 'node:crypto';
import { expect } from 'chai';
import type { OutboundRequest, OutgoingItem, PlatformResponse, NormalizedEvent } from 'tracklane/sdk';
import { outcomeCases, settingsSchemaCases, type OutcomeCase, normalizedEvent, reply } from 'tracklane/sdk/testing';
import plugin from './index.ts';
import type { WebhookSettings } from './settings.ts';
import { signature } from './sign.ts';

// 32 bytes 0x01..0x20; the signature below was computed with
// `openssl dgst -sha256 -mac HMAC -macopt hexkey:0102…1f20 -binary | base64`.
const SECRET = 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=';
const SETTINGS: WebhookSettings = { url: 'https://hooks.example.com/tracklane?src=prod', secret: SECRET };
const RECEIVED = 1_700_000_000_250; // 2023-11-14T22:13:20.250Z
const NOW = 1_700_000_123_999;

/** Standard Webhooks verification written from the Standard Webhooks rules, sharing nothing with the plugin. */
function verify(req: OutboundRequest, secret: string, nowSeconds: number): boolean {
  const id = req.headers['webhook-id'];
  const ts = req.headers['webhook-timestamp'];
  const header = req.headers['webhook-signature'];
  if (!id || !ts || !header) return false;
  if (Math.abs(nowSeconds - Number(ts)) > 300) return false;
  const key = Buffer.from(secret.split('_')[1], 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${ts}.${req.body}`).digest();
  return header.split(' ').some((part) => {
    const [version, sig] = part.split(',');
    if (version !== 'v1' || sig === undefined) return false;
    const given = Buffer.from(sig, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

const normalized = (over: Partial<NormalizedEvent> = {}): NormalizedEvent => normalizedEvent({
  event: { name: 'product_viewed', value: 29.9, currency: 'EUR', exchange_rate: 1 },
  context: { environment: 'prod', data_source: 'website', url: 'https://shop.example/p/mug' },
  consent: { analytics: true, personalization: true, marketing: false },
  ...over,
});

function item(over: Partial<OutgoingItem> = {}): OutgoingItem {
  return {
    native: {
      ruleId: 'webhook.event',
      fields: {
        type: 'product_viewed',
        data: {
          event: { name: 'product_viewed', value: 29.9, currency: 'EUR', exchange_rate: 1 },
          context: { environment: 'prod', data_source: 'website', url: 'https://shop.example/p/mug' },
        },
      },
    },
    eventId: 'evt_01HF0000000000000000000001',
    messageId: 'msg_0123456789abcdef0123456789abcdef',
    event: normalized(),
    identifiers: {},
    attribution: {},
    receivedAt: RECEIVED,
    ...over,
  };
}

const build = (items: OutgoingItem[], settings: WebhookSettings = SETTINGS, now = NOW) => plugin.buildRequests({ settings, items, now });
const res = (status: number, headers: Record<string, string> = {}): PlatformResponse => reply(status, '', headers);

describe('webhook plugin', () => {
  describe('definition', () => {
    it('is named after its folder, category webhook, hashed identifiers, one event per request', () => {
      expect(plugin.name).to.equal('webhook');
      expect(plugin.category).to.equal('webhook');
      expect(plugin.identifiers?.table).to.include.keys('sha256_email', 'sha256_phone');
      expect(plugin.batch).to.deep.equal({ maxEvents: 1 });
      expect(plugin.secretSettings).to.deep.equal(['secret', 'previous_secret']);
    });
  });

  describe('settingsSchema', () => {
    const good: Record<string, unknown>[] = [
      { url: 'https://hooks.example.com/tracklane', secret: SECRET },
      { url: 'http://127.0.0.1:8099/in', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
      { url: 'https://hooks.example.com/y', secret: `whsec_${Buffer.alloc(25, 3).toString('base64')}` },
      { url: 'https://hooks.example.com/x?a=1', secret: `whsec_${Buffer.alloc(64, 7).toString('base64')}`, endpoint: 'http://localhost:9000', test_event_code: 'T1', events: ['checkout_completed'], consent_category: 'marketing' },
    ];
    const bad: [string, Record<string, unknown>][] = [
      ['no url', { secret: SECRET }],
      ['no secret', { url: 'https://hooks.example.com/' }],
      ['an ftp url', { url: 'ftp://hooks.example.com/', secret: SECRET }],
      ['a url without a host', { url: 'https:///path', secret: SECRET }],
      ['a relative url', { url: '/hooks', secret: SECRET }],
      ['a secret without whsec_', { url: 'https://h.example/', secret: 'AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=' }],
      ['a secret that is not base64', { url: 'https://h.example/', secret: 'whsec_not-base64-at-all-but-long-enough!!' }],
      ['a secret of 23 bytes', { url: 'https://h.example/', secret: `whsec_${Buffer.alloc(23, 1).toString('base64')}` }],
      ['a secret of 16 bytes', { url: 'https://h.example/', secret: `whsec_${Buffer.alloc(16, 1).toString('base64')}` }],
      ['a secret of 65 bytes', { url: 'https://h.example/', secret: `whsec_${Buffer.alloc(65, 1).toString('base64')}` }],
      ['a secret with bad padding', { url: 'https://h.example/', secret: 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA' }],
      ['an unknown consent_category', { url: 'https://h.example/', secret: SECRET, consent_category: 'all' }],
      ['an unknown key', { url: 'https://h.example/', secret: SECRET, secrets_previous: [] }],
    ];
    settingsSchemaCases(plugin.settingsSchema, { accepts: good.map((config) => [JSON.stringify(config).slice(0, 90), config]), refuses: bad });
  });

  describe('signature', () => {
    it('matches the Standard Webhooks reference vector', () => {
      expect(signature('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}'))
        .to.equal('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    });

    it('matches a vector computed by hand with openssl', () => {
      expect(signature(SECRET, 'evt_42', 1700000000, '{"type":"lead_created","id":"evt_42"}'))
        .to.equal('v1,9B1GeYOelgg7NiAUN4LXtFFH7I4VILePPgLh024H3+c=');
    });
  });

  describe('buildRequests', () => {
    it('builds the exact signed request for one event', () => {
      const [req, ...rest] = build([item()]);
      expect(rest).to.have.length(0);
      expect(req.method).to.equal('POST');
      expect(req.url).to.equal('https://hooks.example.com/tracklane?src=prod');
      expect(req.eventIds).to.deep.equal(['evt_01HF0000000000000000000001']);
      const body = JSON.stringify({
        type: 'product_viewed',
        id: 'evt_01HF0000000000000000000001',
        timestamp: '2023-11-14T22:13:20.250Z',
        data: {
          event: { name: 'product_viewed', value: 29.9, currency: 'EUR', exchange_rate: 1 },
          context: { environment: 'prod', data_source: 'website', url: 'https://shop.example/p/mug' },
        },
      });
      expect(req.body).to.equal(body);
      const key = Buffer.from('AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=', 'base64');
      const sig = createHmac('sha256', key).update(`msg_0123456789abcdef0123456789abcdef.1700000123.${body}`).digest('base64');
      expect(req.headers).to.deep.equal({
        'content-type': 'application/json',
        'webhook-id': 'msg_0123456789abcdef0123456789abcdef',
        'webhook-timestamp': '1700000123',
        'webhook-signature': `v1,${sig}`,
      });
    });

    it('verifies with an independent implementation, and fails with another secret or a changed body', () => {
      const [req] = build([item()]);
      expect(verify(req, SECRET, 1700000123)).to.equal(true);
      expect(verify(req, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 1700000123)).to.equal(false);
      expect(verify({ ...req, body: req.body.replace('29.9', '19.9') }, SECRET, 1700000123)).to.equal(false);
    });

    it('keeps webhook-id across retries and signs each attempt with its own timestamp', () => {
      const [first] = build([item()], SETTINGS, NOW);
      const [retry] = build([item()], SETTINGS, NOW + 3_600_000);
      expect(retry.headers['webhook-id']).to.equal(first.headers['webhook-id']);
      expect(retry.body).to.equal(first.body);
      expect(retry.headers['webhook-timestamp']).to.equal('1700003723');
      expect(retry.headers['webhook-signature']).not.to.equal(first.headers['webhook-signature']);
      expect(verify(retry, SECRET, 1700003723)).to.equal(true);
    });

    it('never puts the secret in the URL, the body or anywhere but the HMAC key', () => {
      const [req] = build([item()]);
      const raw = 'AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=';
      for (const text of [req.url, req.body, ...Object.values(req.headers)]) {
        expect(text).not.to.include(raw);
      }
    });

    it('sends one request per event', () => {
      const reqs = build([item({ eventId: 'a' }), item({ eventId: 'b' }), item({ eventId: 'c' })]);
      expect(reqs.map((r) => r.eventIds)).to.deep.equal([['a'], ['b'], ['c']]);
      expect(reqs.map((r) => JSON.parse(r.body).id)).to.deep.equal(['a', 'b', 'c']);
      for (const r of reqs) expect(verify(r, SECRET, 1700000123)).to.equal(true);
    });

    it('defaults type to the event name and data to {}; a rule cannot change id', () => {
      const [req] = build([item({ native: { ruleId: 'x', fields: { id: 'forged', extra: true } } })]);
      expect(req.body).to.equal(JSON.stringify({
        type: 'product_viewed', id: 'evt_01HF0000000000000000000001', timestamp: '2023-11-14T22:13:20.250Z', data: {}, extra: true,
      }));
    });

    it('in test mode sends as usual with a webhook-test header, and test_event_code in the signed body', () => {
      const [plain] = build([item()]);
      expect(plain.headers).to.not.have.property('webhook-test');
      const [req] = build([item()], { ...SETTINGS, test_event_code: 'TEST-1' });
      expect(req.url).to.equal(plain.url);
      expect(req.headers['webhook-test']).to.equal('TEST-1');
      expect(JSON.parse(req.body).test_event_code).to.equal('TEST-1');
      expect(verify(req, SECRET, 1700000123)).to.equal(true);
      const [odd] = build([item()], { ...SETTINGS, test_event_code: 'tést\n1' });
      expect(odd.headers['webhook-test'], 'what a header cannot carry is percent-encoded').to.equal('t%C3%A9st%0A1');
    });

    it('moves the path and query of url onto endpoint when an endpoint override is set', () => {
      const [req] = build([item()], { ...SETTINGS, endpoint: 'http://127.0.0.1:9000/' });
      expect(req.url).to.equal('http://127.0.0.1:9000/tracklane?src=prod');
    });
  });

  describe('classifyResponse', () => {
    const cases: OutcomeCase[] = [
      ['200', res(200), 'success'],
      ['202', res(202), 'success'],
      ['204', res(204), 'success'],
      ['400', res(400), 'retryable'],
      ['401', res(401), 'retryable'],
      ['403', res(403), 'retryable'],
      ['404', res(404), 'retryable'],
      ['408', res(408), 'retryable'],
      ['410 (endpoint gone)', res(410), 'permanent'],
      ['413', res(413), 'retryable'],
      ['429 with Retry-After', res(429, { 'retry-after': '90' }), 'retryable', 90_000],
      ['429 with a malformed Retry-After', res(429, { 'retry-after': 'soon' }), 'retryable'],
      ['500', res(500), 'retryable'],
      ['503 with Retry-After', res(503, { 'Retry-After': '10' }), 'retryable', 10_000],
      ['301', res(301, { location: 'https://new.example/' }), 'permanent'],
      ['302', res(302, { location: 'https://new.example/' }), 'permanent'],
      ['307', res(307), 'permanent'],
    ];
    outcomeCases(plugin.classifyResponse, cases);

    it('says why a 410 stops delivery', () => {
      const c = plugin.classifyResponse(res(410));
      expect(c.outcome === 'permanent' && c.message).to.match(/410 Gone.*no longer exists/);
    });
  });
});
