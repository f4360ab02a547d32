import { expect } from 'chai';
import type { OutgoingItem, PlatformResponse, NormalizedEvent } from 'tracklane/sdk';
import { settingsSchemaCases, normalizedEvent, reply as res } from 'tracklane/sdk/testing';
import ga4 from './index.ts';
import type { Ga4Settings } from './settings.ts';

const SETTINGS: Ga4Settings = { measurement_id: 'G-ABC123XYZ', api_secret: 's3cr3t/+=' };
const URL_DEFAULT = 'https://www.google-analytics.com/mp/collect?measurement_id=G-ABC123XYZ&api_secret=s3cr3t%2F%2B%3D';
const RECEIVED = 1_700_000_000_123;
const EMAIL_HASH = 'a'.repeat(64);
const PHONE_HASH = 'b'.repeat(64);
const FN_HASH = 'c'.repeat(64);

const event = (name: string, over: Partial<NormalizedEvent> = {}): NormalizedEvent => normalizedEvent({
  event: { name, exchange_rate: 1 },
  context: { environment: 'prod', data_source: 'website', user_agent: 'Mozilla/5.0 Test', overide_ip: '203.0.113.7' },
  ...over,
});

function item(over: Partial<OutgoingItem> = {}): OutgoingItem {
  return {
    native: { ruleId: 'ga4.purchase', fields: { name: 'purchase', params: { transaction_id: 'ORD-1', value: 10, currency: 'EUR' } } },
    eventId: 'ORD-1',
    messageId: 'msg_0123456789abcdef0123456789abcdef',
    event: event('checkout_completed'),
    identifiers: {},
    attribution: { client_id: '111.222', client_id_source: 'cookie' },
    receivedAt: RECEIVED,
    ...over,
  };
}

const build = (items: OutgoingItem[], settings: Ga4Settings = SETTINGS) =>
  ga4.buildRequests({ settings, items, now: RECEIVED + 5 });
const bodyOf = (items: OutgoingItem[], settings?: Ga4Settings) => JSON.parse(build(items, settings)[0].body);

describe('ga4 plugin', () => {
  describe('definition', () => {
    it('is named after its folder and declares the analytics category, secrets and the google identifiers', () => {
      expect(ga4.name).to.equal('ga4');
      expect(ga4.category).to.equal('analytics');
      expect(ga4.secretSettings).to.deep.equal(['api_secret']);
      expect(ga4.identifiers?.forms).to.include({ phone: 'e164', country: 'upper', name: 'letters' });
      expect(ga4.consent).to.equal('analytics');
      expect(ga4.batch).to.deep.equal({ maxEvents: 25 });
    });
  });

  describe('settingsSchema', () => {
    const accepted: [string, unknown][] = [
      ['the documented config', { measurement_id: 'G-ABC123XYZ', api_secret: 'xyz' }],
      ['every optional key', {
        measurement_id: 'G-ABC123XYZ', api_secret: 'xyz', endpoint: 'https://region1.google-analytics.com',
        test_event_code: 'TEST1', events: ['checkout_completed', 'cart_viewed'], consent_category: 'marketing',
      }],
      ['a loopback sandbox endpoint', { measurement_id: 'G-1', api_secret: 'x', endpoint: 'http://127.0.0.1:9999/ga/' }],
    ];

    const refused: [string, unknown][] = [
      ['a missing api_secret', { measurement_id: 'G-ABC123XYZ' }],
      ['a missing measurement_id', { api_secret: 'xyz' }],
      ['a measurement id without G-', { measurement_id: 'UA-1234-1', api_secret: 'xyz' }],
      ['an empty api_secret', { measurement_id: 'G-ABC', api_secret: '' }],
      ['an unknown key', { measurement_id: 'G-ABC', api_secret: 'x', debug: true }],
      ['an endpoint that is not a URL', { measurement_id: 'G-ABC', api_secret: 'x', endpoint: 'google-analytics.com' }],
      ['a non-http endpoint', { measurement_id: 'G-ABC', api_secret: 'x', endpoint: 'ftp://example.com' }],
      ['events that are not strings', { measurement_id: 'G-ABC', api_secret: 'x', events: [1] }],
      ['an unknown consent category', { measurement_id: 'G-ABC', api_secret: 'x', consent_category: 'none' }],
      ['a number as api_secret', { measurement_id: 'G-ABC', api_secret: 42 }],
      ['an empty test_event_code (test mode is on or off, never ambiguous)', { measurement_id: 'G-ABC', api_secret: 'x', test_event_code: '' }],
    ];
    settingsSchemaCases(ga4.settingsSchema, { accepts: accepted, refuses: refused });
  });

  describe('buildRequests', () => {
    it('builds the exact request for one purchase with identity, consent, IP and user agent', () => {
      const requests = build([item({
        identifiers: {
          user_id: 'cust-42',
          'user_data.sha256_email_address': EMAIL_HASH,
          'user_data.sha256_phone_number': [PHONE_HASH],
          'user_data.address.sha256_first_name': FN_HASH,
          'user_data.address.city': 'bucuresti',
          'user_data.address.country': 'RO',
        },
        attribution: { client_id: '111.222', client_id_source: 'cookie', session_id: '1700000000' },
      })]);
      expect(requests).to.have.length(1);
      expect(requests[0].method).to.equal('POST');
      expect(requests[0].url).to.equal(URL_DEFAULT);
      expect(requests[0].headers).to.deep.equal({ 'content-type': 'application/json' });
      expect(requests[0].eventIds).to.deep.equal(['ORD-1']);
      expect(requests[0].body).to.equal(JSON.stringify({
        client_id: '111.222',
        user_id: 'cust-42',
        timestamp_micros: 1_700_000_000_123_000,
        user_data: {
          sha256_email_address: [EMAIL_HASH],
          sha256_phone_number: [PHONE_HASH],
          address: [{ sha256_first_name: FN_HASH, city: 'bucuresti', country: 'RO' }],
        },
        consent: { ad_user_data: 'GRANTED', ad_personalization: 'GRANTED' },
        ip_override: '203.0.113.7',
        user_agent: 'Mozilla/5.0 Test',
        events: [{
          name: 'purchase',
          params: { transaction_id: 'ORD-1', value: 10, currency: 'EUR', session_id: '1700000000', engagement_time_msec: 1 },
        }],
      }));
    });

    it('expands flat dot-path rule fields and keeps a session_id the rule set itself', () => {
      const body = bodyOf([item({
        native: { ruleId: 'r', fields: { name: 'view_item', 'params.value': 5, 'params.session_id': '42' } },
        attribution: { client_id: '1.2', session_id: '99' },
      })]);
      expect(body.events).to.deep.equal([{ name: 'view_item', params: { value: 5, session_id: '42', engagement_time_msec: 1 } }]);
    });

    it('adds neither session_id nor engagement_time_msec without a GA session', () => {
      expect(bodyOf([item()]).events[0].params).to.deep.equal({ transaction_id: 'ORD-1', value: 10, currency: 'EUR' });
    });

    it('sends consent DENIED and leaves user_data out when marketing consent is refused', () => {
      const body = bodyOf([item({
        event: event('checkout_completed', { consent: { analytics: true, personalization: false, marketing: false } }),
        identifiers: { user_id: 'u1', 'user_data.sha256_email_address': EMAIL_HASH },
      })]);
      expect(body.user_id).to.equal('u1');
      expect(body).not.to.have.property('user_data');
      expect(body.consent).to.deep.equal({ ad_user_data: 'DENIED', ad_personalization: 'DENIED' });
    });

    it('personalization without marketing consent does not grant ad_personalization', () => {
      const body = bodyOf([item({ event: event('x', { consent: { analytics: true, personalization: true, marketing: false } }) })]);
      expect(body.consent).to.deep.equal({ ad_user_data: 'DENIED', ad_personalization: 'DENIED' });
    });

    it('marketing without personalization consent grants ad_user_data only', () => {
      const body = bodyOf([item({ event: event('x', { consent: { analytics: true, personalization: false, marketing: true } }) })]);
      expect(body.consent).to.deep.equal({ ad_user_data: 'GRANTED', ad_personalization: 'DENIED' });
    });

    it('never sends the deprecated non_personalized_ads', () => {
      for (const personalization of [true, false]) {
        const body = bodyOf([item({ event: event('x', { consent: { analytics: true, personalization, marketing: false } }) })]);
        expect(body).not.to.have.property('non_personalized_ads');
      }
    });

    it('omits ip_override, user_agent, user_id and user_data when absent', () => {
      const body = bodyOf([item({ event: event('x', { context: { environment: 'prod' } }) })]);
      expect(Object.keys(body)).to.deep.equal(['client_id', 'timestamp_micros', 'consent', 'events']);
    });

    it('honours settings.endpoint with its trailing slash trimmed', () => {
      const [req] = build([item()], { ...SETTINGS, endpoint: 'https://region1.google-analytics.com/' });
      expect(req.url).to.equal('https://region1.google-analytics.com/mp/collect?measurement_id=G-ABC123XYZ&api_secret=s3cr3t%2F%2B%3D');
    });

    it('in test mode (test_event_code) sends the same body to the validation server, /debug/mp/collect, with the same query', () => {
      const [prod] = build([item()], SETTINGS);
      const [req] = build([item()], { ...SETTINGS, endpoint: 'https://region1.google-analytics.com/', test_event_code: 'T1' });
      expect(req.url).to.equal('https://region1.google-analytics.com/debug/mp/collect?measurement_id=G-ABC123XYZ&api_secret=s3cr3t%2F%2B%3D');
      expect(req.body, 'the code itself is not sent: GA4 has none').to.equal(prod.body);
      expect(ga4.warnings!({ settings: { ...SETTINGS, test_event_code: 'T1' }, items: [item()], now: RECEIVED }).join('\n')).to.contain('/debug/mp/collect');
    });

    it('puts events of the same user in one request, with their own timestamp when it differs', () => {
      const a = item({ eventId: 'A' });
      const b = item({ eventId: 'B', receivedAt: RECEIVED + 2, native: { ruleId: 'r', fields: { name: 'view_item', params: {} } } });
      const requests = build([a, b]);
      expect(requests).to.have.length(1);
      expect(requests[0].eventIds).to.deep.equal(['A', 'B']);
      const body = JSON.parse(requests[0].body);
      expect(body.timestamp_micros).to.equal(RECEIVED * 1000);
      expect(body.events).to.deep.equal([
        { name: 'purchase', params: { transaction_id: 'ORD-1', value: 10, currency: 'EUR' } },
        { name: 'view_item', params: {}, timestamp_micros: (RECEIVED + 2) * 1000 },
      ]);
    });

    it('groups by client_id and by the rest of the envelope, in order of first appearance', () => {
      const requests = build([
        item({ eventId: 'A1', attribution: { client_id: '1.1' } }),
        item({ eventId: 'B1', attribution: { client_id: '2.2' } }),
        item({ eventId: 'A2', attribution: { client_id: '1.1' } }),
        item({ eventId: 'A3', attribution: { client_id: '1.1' }, event: event('x', { consent: { analytics: true, personalization: false, marketing: true } }) }),
      ]);
      expect(requests.map((r) => r.eventIds)).to.deep.equal([['A1', 'A2'], ['B1'], ['A3']]);
      expect(requests.map((r) => JSON.parse(r.body).client_id)).to.deep.equal(['1.1', '2.2', '1.1']);
    });

    it('splits at 25 events per request', () => {
      const items = Array.from({ length: 60 }, (_, i) => item({ eventId: `E${i}` }));
      const requests = build(items);
      expect(requests.map((r) => r.eventIds.length)).to.deep.equal([25, 25, 10]);
      expect(requests.flatMap((r) => r.eventIds)).to.deep.equal(items.map((i) => i.eventId));
      for (const r of requests) expect(JSON.parse(r.body).events).to.have.length(r.eventIds.length);
    });

    it('halves a request whose body would reach 130 KB', () => {
      const bigItems = Array.from({ length: 60 }, (_, i) => ({ item_id: `SKU-${i}`, item_name: 'x'.repeat(100) }));
      const items = Array.from({ length: 20 }, (_, i) => item({
        eventId: `E${i}`,
        native: { ruleId: 'r', fields: { name: 'view_cart', params: { items: bigItems } } },
      }));
      const requests = build(items);
      expect(requests.length).to.be.greaterThan(1);
      expect(requests.flatMap((r) => r.eventIds)).to.deep.equal(items.map((i) => i.eventId));
      for (const r of requests) expect(Buffer.byteLength(r.body)).to.be.lessThan(130_000);
    });

    it('sends the time a rule gives as the event\'s own timestamp_micros', () => {
      const own = (RECEIVED - 3_600_000) * 1000;
      const body = bodyOf([item({ native: { ruleId: 'r', fields: { name: 'generate_lead', timestamp_micros: own, params: {} } } })]);
      expect(body.timestamp_micros).to.equal(own);
      expect(body.events).to.deep.equal([{ name: 'generate_lead', params: {} }]);
    });

    it('moves a time older than 72 hours to 72 hours ago less a minute, and a time after the event was received to when it was', () => {
      const now = RECEIVED + 5;
      const old = bodyOf([item({ native: { ruleId: 'r', fields: { name: 'x', timestamp_micros: 1_000_000, params: {} } } })]);
      expect(old.timestamp_micros).to.equal((now - 72 * 3_600_000 + 60_000) * 1000);
      const future = bodyOf([item({ native: { ruleId: 'r', fields: { name: 'x', timestamp_micros: (now + 86_400_000) * 1000, params: {} } } })]);
      // Not the build's clock: the same event built again later (a trace) gives the same bytes.
      expect(future.timestamp_micros).to.equal(RECEIVED * 1000);
    });

    it('gives an event in a shared request its own timestamp_micros only when it differs', () => {
      const a = item({ eventId: 'A', native: { ruleId: 'r', fields: { name: 'a', params: {}, timestamp_micros: RECEIVED * 1000 - 5_000 } } });
      const b = item({ eventId: 'B', native: { ruleId: 'r', fields: { name: 'b', params: {} } } });
      const body = bodyOf([a, b]);
      expect(body.timestamp_micros).to.equal(RECEIVED * 1000 - 5_000);
      expect(body.events).to.deep.equal([{ name: 'a', params: {} }, { name: 'b', params: {}, timestamp_micros: RECEIVED * 1000 }]);
    });

    it('sends user_properties from the rule at request level, each value wrapped as {value}', () => {
      const body = bodyOf([item({
        native: { ruleId: 'r', fields: { name: 'x', params: {}, user_properties: { orders_total_number: 3, tier: { value: 'gold', timestamp_micros: 7 }, none: null } } },
      })]);
      expect(body.user_properties).to.deep.equal({ orders_total_number: { value: 3 }, tier: { value: 'gold', timestamp_micros: 7 } });
      expect(body.events).to.deep.equal([{ name: 'x', params: {} }]);
      expect(Object.keys(body)).to.deep.equal(['client_id', 'timestamp_micros', 'user_properties', 'consent', 'ip_override', 'user_agent', 'events']);
    });

    it('never sends an identifier as a user property: e-mails, SHA-256 hashes and the user\'s own identifiers are dropped with a warning', () => {
      const user = { id: 'cust-42', email: 'Ana@Example.com', phone: '+40 721 234 567', first_name: 'Ana' };
      const input = item({
        event: event('x', { user }),
        native: { ruleId: 'r', fields: { name: 'x', params: {}, user_properties: {
          contact: 'someone@example.com', hashed: 'a'.repeat(64), customer: 'cust-42', mobile: '0040721234567', nickname: ' ana ',
          orders_total_number: 3, tier: 'gold',
        } } },
      });
      const body = bodyOf([input]);
      expect(body.user_properties).to.deep.equal({ orders_total_number: { value: 3 }, tier: { value: 'gold' } });
      expect(ga4.warnings!({ settings: SETTINGS, items: [input], now: RECEIVED })).to.include.members([
        'user property contact looks like an identifier (an e-mail, a phone, a hash or one of the user\'s identifiers) and was not sent',
        'user property hashed looks like an identifier (an e-mail, a phone, a hash or one of the user\'s identifiers) and was not sent',
        'user property customer looks like an identifier (an e-mail, a phone, a hash or one of the user\'s identifiers) and was not sent',
        'user property mobile looks like an identifier (an e-mail, a phone, a hash or one of the user\'s identifiers) and was not sent',
        'user property nickname looks like an identifier (an e-mail, a phone, a hash or one of the user\'s identifiers) and was not sent',
      ]);
    });

    it('checks every string of every event: identifier-like params and item fields are dropped, ids keep their long numbers', () => {
      const input = item({
        event: event('x', { user: { first_name: 'Ana', last_name: 'Pop' }, context: { environment: 'prod', user_agent: 'Bot/1.0 (+40 744 555 666)' } }),
        attribution: { client_id: '111.222', session_id: '1700000000' },
        native: { ruleId: 'r', fields: { name: 'purchase', params: {
          transaction_id: '5123456789012', coupon: 'ana.pop%40example.com', affiliation: 'Pop Ana', shipping_tier: 'express',
          items: [{ item_id: '40123456789012', item_name: 'Mug', item_brand: 'call 0744 555 666' }],
        } } },
      });
      const body = bodyOf([input]);
      expect(body).to.not.have.property('user_agent');
      expect(body.events).to.deep.equal([{ name: 'purchase', params: {
        transaction_id: '5123456789012', shipping_tier: 'express',
        items: [{ item_id: '40123456789012', item_name: 'Mug' }], session_id: '1700000000', engagement_time_msec: 1,
      } }]);
      expect(ga4.warnings!({ settings: SETTINGS, items: [input], now: RECEIVED })).to.deep.equal([
        "user_agent held what looks like an identifier (an e-mail, a phone, a hash or one of the user's identifiers) and was not sent",
        "parameter coupon looks like an identifier (an e-mail, a phone, a hash or one of the user's identifiers) and was not sent",
        "parameter affiliation looks like an identifier (an e-mail, a phone, a hash or one of the user's identifiers) and was not sent",
        "parameter items[].item_brand looks like an identifier (an e-mail, a phone, a hash or one of the user's identifiers) and was not sent",
      ]);
    });

    it('drops reserved user property names and values that are not a string, number or {value}', () => {
      const input = item({ native: { ruleId: 'r', fields: { name: 'x', params: {}, user_properties: {
        user_id: 'u', first_visit_time: 1, ga_tier: 'x', google_x: 'y', firebase_x: 'z', list: ['a'], obj: { a: 1 }, ok: true,
      } } } });
      expect(bodyOf([input]).user_properties).to.deep.equal({ ok: { value: true } });
      const warnings = ga4.warnings!({ settings: SETTINGS, items: [input], now: RECEIVED });
      expect(warnings).to.include('user property user_id has a name GA4 reserves and was not sent');
      expect(warnings).to.include('user property list is neither a string, a number, true/false nor {value} and was not sent');
    });

    it('puts events whose user properties differ in separate requests', () => {
      const requests = build([
        item({ eventId: 'A', native: { ruleId: 'r', fields: { name: 'x', params: {}, user_properties: { tier: 'gold' } } } }),
        item({ eventId: 'B', native: { ruleId: 'r', fields: { name: 'x', params: {}, user_properties: { tier: 'silver' } } } }),
      ]);
      expect(requests.map((r) => r.eventIds)).to.deep.equal([['A'], ['B']]);
    });

    it('sends a request without client_id when the rule let an event through without one', () => {
      const body = bodyOf([item({ attribution: {} })]);
      expect(body).not.to.have.property('client_id');
      expect(Object.keys(body)[0]).to.equal('timestamp_micros');
    });
  });

  describe('classifyResponse', () => {
    const cases: [string, PlatformResponse, ReturnType<typeof ga4.classifyResponse>][] = [
      ['204 No Content', res(204), { outcome: 'success' }],
      ['200 with an empty body', res(200), { outcome: 'success' }],
      ['200 with HTML (GA4 never reports payload errors)', res(200, '<html></html>'), { outcome: 'success' }],
      ['200 from the debug endpoint with no messages', res(200, '{"validationMessages":[]}'), { outcome: 'success' }],
      ['200 from the debug endpoint with a message about the request (every event fails with it)',
        res(200, JSON.stringify({ validationMessages: [{ fieldPath: 'client_id', description: 'client_id is required.', validationCode: 'VALUE_REQUIRED' }] })),
        { outcome: 'permanent', message: 'GA4 validation failed: VALUE_REQUIRED at client_id: client_id is required.' }],
      // The reply documented on https://developers.google.com/analytics/devguides/collection/protocol/ga4/validating-events
      ['200 from the debug endpoint naming one event by index (only that event fails)',
        res(200, JSON.stringify({ validationMessages: [{
          fieldPath: 'events', description: 'Event at index: [1] has invalid name [_badEventName]. Names must start with an alphabetic character.', validationCode: 'NAME_INVALID',
        }] })),
        { outcome: 'success', message: 'GA4 validation: 1 event invalid', events: [{ index: 1, outcome: 'permanent',
          message: 'GA4 validation failed: NAME_INVALID at events: Event at index: [1] has invalid name [_badEventName]. Names must start with an alphabetic character.' }] }],
      ['200 from the debug endpoint naming an event and the request (every event fails)',
        res(200, JSON.stringify({ validationMessages: [
          { fieldPath: 'events', description: 'Event at index: [0] has invalid name [_x].', validationCode: 'NAME_INVALID' },
          { fieldPath: 'user_properties', validationCode: 'NAME_RESERVED' },
        ] })),
        { outcome: 'permanent', message: 'GA4 validation failed: NAME_INVALID at events: Event at index: [0] has invalid name [_x].; NAME_RESERVED at user_properties' }],
      ['302', res(302, '', { location: 'https://x' }),
        { outcome: 'permanent', message: 'GA4 answered HTTP 302 (redirects are not followed; check the endpoint)' }],
      ['400', res(400), { outcome: 'permanent', message: 'GA4 answered HTTP 400' }],
      ['401', res(401), { outcome: 'permanent', message: 'GA4 answered HTTP 401' }],
      ['403', res(403), { outcome: 'permanent', message: 'GA4 answered HTTP 403' }],
      ['404', res(404), { outcome: 'permanent', message: 'GA4 answered HTTP 404' }],
      ['408', res(408), { outcome: 'retryable', message: 'GA4 answered HTTP 408' }],
      ['429 with Retry-After', res(429, '', { 'Retry-After': '30' }), { outcome: 'retryable', message: 'GA4 answered HTTP 429', retryAfterMs: 30_000 }],
      ['429 with an HTTP-date Retry-After (ignored)', res(429, '', { 'retry-after': 'Wed, 21 Oct 2026 07:28:00 GMT' }),
        { outcome: 'retryable', message: 'GA4 answered HTTP 429' }],
      ['500', res(500), { outcome: 'retryable', message: 'GA4 answered HTTP 500' }],
      ['503 with Retry-After', res(503, '', { 'retry-after': '5' }), { outcome: 'retryable', message: 'GA4 answered HTTP 503', retryAfterMs: 5000 }],
    ];
    for (const [what, response, expected] of cases) {
      it(what, () => expect(ga4.classifyResponse(response)).to.deep.equal(expected));
    }
  });
});
