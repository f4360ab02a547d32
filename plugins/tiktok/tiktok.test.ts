import { expect } from 'chai';
import type { OutgoingItem, NormalizedEvent } from 'tracklane/sdk';
import { outcomeCases, settingsSchemaCases, type OutcomeCase, normalizedEvent, reply as res } from 'tracklane/sdk/testing';
import plugin from './index.ts';
import type { TiktokSettings } from './settings.ts';

const RECEIVED = 1_760_000_000_999;
const NOW = RECEIVED + 1_000;
const EMAIL = 'c'.repeat(64);
const PHONE = 'd'.repeat(64);
const SETTINGS: TiktokSettings = { pixel_code: 'C4ABCDEF123456789XYZ', access_token: 'tt-token' };
const URL = 'https://business-api.tiktok.com/open_api/v1.3/event/track/';

const normalized = (over: Partial<NormalizedEvent> = {}): NormalizedEvent => normalizedEvent({
  event: { name: 'checkout_completed', value: 10, currency: 'EUR', exchange_rate: 1, id: 'ORD-1' },
  context: { environment: 'prod', data_source: 'website', url: 'https://shop.example/checkout', user_agent: 'Mozilla/5.0', overide_ip: '203.0.113.7' },
  ...over,
});

function item(over: Partial<OutgoingItem> = {}): OutgoingItem {
  return {
    native: { ruleId: 'tiktok.purchase', fields: { event: 'Purchase', properties: { value: 10, currency: 'EUR' } } },
    eventId: 'ORD-1',
    messageId: 'msg_0123456789abcdef0123456789abcdef',
    event: normalized(),
    identifiers: { 'user.email': EMAIL, 'user.phone': PHONE },
    attribution: { ttclid: 'E.C.P.abc123', ttp: '2Xyz_ttp-cookie' },
    receivedAt: RECEIVED,
    ...over,
  };
}

const build = (items: OutgoingItem[], settings: TiktokSettings = SETTINGS) => plugin.buildRequests({ settings, items, now: NOW });

const leadItem = (over: Partial<OutgoingItem> = {}) => item({
  native: {
    ruleId: 'tiktok.lead_qualified',
    fields: { event_source: 'crm', event: 'QualifiedLead', lead: { lead_id: '7000000000000000001', lead_event_source: 'HubSpot' } },
  },
  eventId: 'LEAD-9',
  event: normalized({ event: { name: 'lead_qualified', exchange_rate: 1, id: 'LEAD-9' }, context: { environment: 'prod', data_source: 'crm' } }),
  identifiers: { 'user.email': EMAIL },
  attribution: {},
  ...over,
});

describe('tiktok plugin', () => {
  describe('definition', () => {
    it('is named after its folder, advertising, tiktok identifiers, batches of 1,000', () => {
      expect(plugin.name).to.equal('tiktok');
      expect(plugin.category).to.equal('advertising');
      expect(plugin.identifiers?.forms).to.include({ phone: 'e164', name: 'trim' });
      expect(plugin.consent).to.equal('marketing');
      expect(plugin.batch).to.deep.equal({ maxEvents: 1000 });
      expect(plugin.secretSettings).to.deep.equal(['access_token']);
    });
  });

  describe('settingsSchema', () => {
    const good: Record<string, unknown>[] = [
      { pixel_code: 'C4ABCDEF123456789XYZ', access_token: 'tt-token' },
      {
        pixel_code: 'C4ABCDEF123456789XYZ', access_token: 'tt-token', endpoint: 'https://sandbox.example', test_event_code: 'TEST12345',
        events: ['checkout_completed', 'lead_created'], consent_category: 'analytics', crm_event_set_id: '7234567890123456789', lead_event_source: 'Salesforce',
      },
    ];
    const bad: [string, Record<string, unknown>][] = [
      ['no pixel_code', { access_token: 't' }],
      ['no access_token', { pixel_code: 'C4AB' }],
      ['a pixel_code with spaces', { pixel_code: 'C4 AB', access_token: 't' }],
      ['a token with whitespace', { pixel_code: 'C4AB', access_token: 'a b' }],
      ['an endpoint that is not a URL', { pixel_code: 'C4AB', access_token: 't', endpoint: 'business-api.tiktok.com' }],
      ['events with a number', { pixel_code: 'C4AB', access_token: 't', events: [1] }],
      ['an unknown consent_category', { pixel_code: 'C4AB', access_token: 't', consent_category: 'none' }],
      ['an unknown key', { pixel_code: 'C4AB', access_token: 't', advertiser_id: '1' }],
    ];
    settingsSchemaCases(plugin.settingsSchema, { accepts: good.map((config) => [JSON.stringify(config), config]), refuses: bad });
  });

  describe('buildRequests', () => {
    it('builds the exact request for one purchase', () => {
      const [req, ...rest] = build([item({
        native: {
          ruleId: 'tiktok.purchase',
          fields: {
            event: 'Purchase',
            properties: {
              contents: [{ content_id: 'SKU-1', content_name: 'Mug', price: 29.9, quantity: 2 }],
              content_type: 'product',
              currency: 'EUR',
              value: 59.8,
              order_id: 'ORD-1',
            },
          },
        },
        event: normalized({ context: { environment: 'prod', data_source: 'website', url: 'https://shop.example/checkout', referrer_url: 'https://www.tiktok.com/', user_agent: 'Mozilla/5.0', overide_ip: '203.0.113.7' } }),
      })]);
      expect(rest).to.have.length(0);
      expect(req.method).to.equal('POST');
      expect(req.url).to.equal(URL);
      expect(req.headers).to.deep.equal({ 'content-type': 'application/json', 'access-token': 'tt-token' });
      expect(req.eventIds).to.deep.equal(['ORD-1']);
      expect(req.body).to.equal(JSON.stringify({
        event_source: 'web',
        event_source_id: 'C4ABCDEF123456789XYZ',
        data: [{
          event: 'Purchase',
          event_time: 1760000000,
          event_id: 'ORD-1',
          user: { email: EMAIL, phone: PHONE, ttclid: 'E.C.P.abc123', ttp: '2Xyz_ttp-cookie', ip: '203.0.113.7', user_agent: 'Mozilla/5.0' },
          properties: {
            contents: [{ content_id: 'SKU-1', content_name: 'Mug', price: 29.9, quantity: 2 }],
            content_type: 'product',
            currency: 'EUR',
            value: 59.8,
            order_id: 'ORD-1',
          },
          page: { url: 'https://shop.example/checkout', referrer: 'https://www.tiktok.com/' },
        }],
      }));
    });

    it('uses endpoint (trailing slashes trimmed) and puts test_event_code before data', () => {
      const [req] = build([item()], { ...SETTINGS, endpoint: 'http://127.0.0.1:9100//', test_event_code: 'TEST777' });
      expect(req.url).to.equal('http://127.0.0.1:9100/open_api/v1.3/event/track/');
      expect(Object.keys(JSON.parse(req.body))).to.deep.equal(['event_source', 'event_source_id', 'test_event_code', 'data']);
      expect(JSON.parse(req.body).test_event_code).to.equal('TEST777');
    });

    it('keeps the token out of the URL and the body', () => {
      const [req] = build([item()], { ...SETTINGS, access_token: 'SECRET-TT-TOKEN' });
      expect(req.url).not.to.include('SECRET-TT-TOKEN');
      expect(req.body).not.to.include('SECRET-TT-TOKEN');
    });

    it('leaves out page, properties and plain user fields that are absent', () => {
      const [req] = build([item({
        native: { ruleId: 'tiktok.lead', fields: { event: 'Lead' } },
        event: normalized({ context: { environment: 'prod', data_source: 'crm' } }),
        attribution: {},
      })]);
      expect(JSON.parse(req.body).data[0]).to.deep.equal({
        event: 'Lead', event_time: 1760000000, event_id: 'ORD-1', user: { email: EMAIL, phone: PHONE },
      });
    });

    it('sends a CRM stage to the pixel as a web event, without the lead object, when no CRM event set is configured', () => {
      const [req, ...rest] = build([leadItem()]);
      expect(rest).to.have.length(0);
      expect(req.body).to.equal(JSON.stringify({
        event_source: 'web',
        event_source_id: 'C4ABCDEF123456789XYZ',
        data: [{ event: 'QualifiedLead', event_time: 1760000000, event_id: 'LEAD-9', user: { email: EMAIL } }],
      }));
    });

    it('sends CRM stages to the CRM event set in their own request when configured', () => {
      const reqs = build([item({ eventId: 'W1' }), leadItem(), item({ eventId: 'W2' })], { ...SETTINGS, crm_event_set_id: '7234567890123456789' });
      expect(reqs.map((r) => r.eventIds)).to.deep.equal([['W1', 'W2'], ['LEAD-9']]);
      expect(reqs[1].body).to.equal(JSON.stringify({
        event_source: 'crm',
        event_source_id: '7234567890123456789',
        data: [{
          event: 'QualifiedLead',
          event_time: 1760000000,
          event_id: 'LEAD-9',
          user: { email: EMAIL },
          lead: { lead_id: '7000000000000000001', lead_event_source: 'HubSpot' },
        }],
      }));
    });

    it('splits at 1,000 events, keeping order and eventIds', () => {
      const reqs = build(Array.from({ length: 2001 }, (_, i) => item({ eventId: `E${i}` })));
      expect(reqs.map((r) => r.eventIds.length)).to.deep.equal([1000, 1000, 1]);
      expect(reqs[2].eventIds).to.deep.equal(['E2000']);
      for (const r of reqs) {
        expect(JSON.parse(r.body).data.map((d: { event_id: string }) => d.event_id)).to.deep.equal(r.eventIds);
      }
    });

    it('returns nothing for no items', () => expect(build([])).to.deep.equal([]));
  });

  describe('classifyResponse', () => {
    const ok = (code: number, message = 'OK') => ({ code, message, request_id: '2025100908532001', data: {} });
    const cases: OutcomeCase[] = [
      ['200 code 0', res(200, ok(0)), 'success'],
      ['200 code 20001 (partial success)', res(200, ok(20001, 'Partial success')), 'success'],
      ['200 code 40100 (rate limit)', res(200, ok(40100, 'Too many requests')), 'retryable'],
      ['200 code 40100 with Retry-After', res(200, ok(40100), { 'retry-after': '5' }), 'retryable', 5_000],
      ['200 code 40001 (auth)', res(200, ok(40001, 'No permission')), 'permanent'],
      ['200 code 40002 (parameter)', res(200, ok(40002, 'Invalid parameter')), 'permanent'],
      ['200 code 40105 (other client error)', res(200, ok(40105, 'Access token invalid')), 'permanent'],
      ['200 code 50002 (TikTok internal)', res(200, ok(50002, 'Internal error')), 'retryable'],
      ['200 truncated body with code 40100', res(200, '{"code":40100,"message":"Too many requ'), 'retryable'],
      ['200 without a code', res(200, ''), 'success'],
      ['400 code 40002', res(400, ok(40002)), 'permanent'],
      ['400 without a body', res(400), 'permanent'],
      ['401', res(401, ok(40001)), 'permanent'],
      ['403', res(403, 'Forbidden'), 'permanent'],
      ['408', res(408), 'retryable'],
      ['429 with Retry-After', res(429, '', { 'Retry-After': '60' }), 'retryable', 60_000],
      ['500', res(500, 'oops'), 'retryable'],
      ['503 with Retry-After', res(503, '', { 'retry-after': '3' }), 'retryable', 3_000],
      ['302', res(302, '', { location: 'https://elsewhere.example/' }), 'permanent'],
    ];
    outcomeCases(plugin.classifyResponse, cases);

    it('names the TikTok code in the message', () => {
      expect(plugin.classifyResponse(res(200, ok(40002, 'Invalid parameter')))).to.deep.equal({
        outcome: 'permanent', message: 'HTTP 200, TikTok code 40002: Invalid parameter', others: 'split',
      });
    });

    it('an invalid parameter (40002) names no event: the request is split; auth and other codes are not', () => {
      expect(plugin.classifyResponse(res(200, ok(40002, 'Invalid value for currency')))).to.have.property('others', 'split');
      expect(plugin.classifyResponse(res(200, ok(40001, 'No permission')))).to.not.have.property('others');
      expect(plugin.classifyResponse(res(200, ok(40105, 'Access token invalid')))).to.not.have.property('others');
    });
  });
});
