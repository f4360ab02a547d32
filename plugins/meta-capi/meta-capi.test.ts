import { expect } from 'chai';
import type { OutgoingItem, NormalizedEvent } from 'tracklane/sdk';
import { outcomeCases, settingsSchemaCases, type OutcomeCase, normalizedEvent, reply as res } from 'tracklane/sdk/testing';
import plugin from './index.ts';
import type { MetaCapiSettings } from './settings.ts';

const RECEIVED = 1_760_000_000_123; // 2025-10-09T08:53:20.123Z
const NOW = RECEIVED + 5_000;
const EM = 'a'.repeat(64);
const PH = 'b'.repeat(64);
const SETTINGS: MetaCapiSettings = { pixel_id: '1234567890', access_token: 'EAAtoken' };

const normalized = (over: Partial<NormalizedEvent> = {}): NormalizedEvent => normalizedEvent({
  event: { name: 'checkout_completed', value: 10, currency: 'EUR', exchange_rate: 1, id: 'ORD-1' },
  context: { environment: 'prod', data_source: 'website', url: 'https://shop.example/checkout', user_agent: 'Mozilla/5.0', overide_ip: '2001:db8::1' },
  ...over,
});

function item(over: Partial<OutgoingItem> = {}): OutgoingItem {
  return {
    native: { ruleId: 'meta-capi.purchase', fields: { event_name: 'Purchase', custom_data: { value: 10, currency: 'EUR' } } },
    eventId: 'ORD-1',
    messageId: 'msg_0123456789abcdef0123456789abcdef',
    event: normalized(),
    identifiers: { 'user_data.em': EM, 'user_data.ph': PH },
    attribution: { fbp: 'fb.1.1700000000000.42', fbc: 'fb.1.1700000000000.IwAR2abc' },
    receivedAt: RECEIVED,
    ...over,
  };
}

const build = (items: OutgoingItem[], settings: MetaCapiSettings = SETTINGS, now = NOW) =>
  plugin.buildRequests({ settings, items, now });

describe('meta-capi plugin', () => {
  describe('definition', () => {
    it('is named after its folder, advertising, meta identifiers, batches of 1,000', () => {
      expect(plugin.name).to.equal('meta-capi');
      expect(plugin.category).to.equal('advertising');
      expect(plugin.identifiers?.forms).to.include({ phone: 'digits', region: 'us-state-code', postalCode: 'us-zip5' });
      expect(plugin.consent).to.equal('marketing');
      expect(plugin.batch).to.deep.equal({ maxEvents: 1000 });
      expect(plugin.secretSettings).to.deep.equal(['access_token']);
    });
  });

  describe('settingsSchema', () => {
    const good: Record<string, unknown>[] = [
      { pixel_id: '1234567890', access_token: 'EAAtoken' },
      {
        pixel_id: '1234567890', access_token: 'EAAtoken', api_version: 'v25.0', endpoint: 'http://127.0.0.1:9000',
        test_event_code: 'TEST123', events: ['checkout_completed'], consent_category: 'marketing', lead_event_source: 'HubSpot',
      },
    ];

    const bad: [string, Record<string, unknown>][] = [
      ['no pixel_id', { access_token: 'EAAtoken' }],
      ['no access_token', { pixel_id: '1234567890' }],
      ['a pixel_id with letters', { pixel_id: 'px-1', access_token: 'EAAtoken' }],
      ['an empty access_token', { pixel_id: '1', access_token: '' }],
      ['an api_version without minor', { pixel_id: '1', access_token: 't', api_version: 'v25' }],
      ['an ftp endpoint', { pixel_id: '1', access_token: 't', endpoint: 'ftp://example.com' }],
      ['a relative endpoint', { pixel_id: '1', access_token: 't', endpoint: '/graph' }],
      ['events as a string', { pixel_id: '1', access_token: 't', events: 'checkout_completed' }],
      ['an unknown consent_category', { pixel_id: '1', access_token: 't', consent_category: 'ads' }],
      ['an unknown key', { pixel_id: '1', access_token: 't', pixel: '1' }],
    ];
    settingsSchemaCases(plugin.settingsSchema, { accepts: good.map((config) => [JSON.stringify(config), config]), refuses: bad });
  });

  describe('buildRequests', () => {
    it('builds the exact request for one purchase', () => {
      const [req, ...rest] = build([
        item({
          native: {
            ruleId: 'meta-capi.purchase',
            fields: {
              event_name: 'Purchase',
              'custom_data.value': 59.8,
              'custom_data.currency': 'EUR',
              'custom_data.contents': [{ id: 'SKU-1', quantity: 2, item_price: 29.9 }],
              'custom_data.order_id': 'ORD-1',
            },
          },
          event: normalized({ context: { environment: 'prod', data_source: 'website', url: 'https://shop.example/checkout', referrer_url: 'https://google.com/', user_agent: 'Mozilla/5.0', overide_ip: '2001:db8::1' } }),
        }),
      ]);
      expect(rest).to.have.length(0);
      expect(req.method).to.equal('POST');
      expect(req.url).to.equal('https://graph.facebook.com/v25.0/1234567890/events?access_token=EAAtoken');
      expect(req.headers).to.deep.equal({ 'content-type': 'application/json' });
      expect(req.eventIds).to.deep.equal(['ORD-1']);
      const expected = {
        data: [{
          event_name: 'Purchase',
          event_time: 1760000000,
          event_id: 'ORD-1',
          action_source: 'website',
          event_source_url: 'https://shop.example/checkout',
          referrer_url: 'https://google.com/',
          user_data: {
            em: EM,
            ph: PH,
            client_ip_address: '2001:db8::1',
            client_user_agent: 'Mozilla/5.0',
            fbc: 'fb.1.1700000000000.IwAR2abc',
            fbp: 'fb.1.1700000000000.42',
          },
          custom_data: { value: 59.8, currency: 'EUR', contents: [{ id: 'SKU-1', quantity: 2, item_price: 29.9 }], order_id: 'ORD-1' },
        }],
      };
      expect(req.body).to.equal(JSON.stringify(expected));
    });

    it('uses endpoint (trailing slash trimmed), api_version, test_event_code and escapes the token', () => {
      const [req] = build([item()], { ...SETTINGS, endpoint: 'http://127.0.0.1:9000/', api_version: 'v24.0', test_event_code: 'TEST4242', access_token: 'a&b=c' });
      expect(req.url).to.equal('http://127.0.0.1:9000/v24.0/1234567890/events?access_token=a%26b%3Dc');
      const body = JSON.parse(req.body);
      expect(Object.keys(body)).to.deep.equal(['data', 'test_event_code']);
      expect(body.test_event_code).to.equal('TEST4242');
    });

    it('never puts the token in the body', () => {
      const [req] = build([item()], { ...SETTINGS, access_token: 'SECRET-TOKEN-XYZ' });
      expect(req.body).not.to.include('SECRET-TOKEN-XYZ');
    });

    const sources: [string | undefined, string | undefined, string][] = [
      ['website', 'https://s.example/', 'website'],
      ['website', undefined, 'website'],
      ['app', undefined, 'app'],
      ['phone', undefined, 'phone_call'],
      ['admin', undefined, 'other'],
      ['crm', undefined, 'system_generated'],
      ['marketplace', 'https://s.example/', 'other'],
      ['physical_store', undefined, 'physical_store'],
      ['kiosk', undefined, 'other'],
      [' Website ', undefined, 'website'],
      [undefined, 'https://s.example/', 'website'],
      [undefined, undefined, 'other'],
    ];
    for (const [dataSource, url, expected] of sources) {
      it(`action_source ${expected} for data_source ${String(dataSource)}${url ? ' with a url' : ''}`, () => {
        const context = { environment: 'prod' as const, ...(dataSource === undefined ? {} : { data_source: dataSource }), ...(url ? { url } : {}) };
        const [req] = build([item({ event: normalized({ context }) })]);
        expect(JSON.parse(req.body).data[0].action_source).to.equal(expected);
      });
    }

    it('lets the rule override action_source in place and add user_data.lead_id after the envelope', () => {
      const [req] = build([item({
        native: {
          ruleId: 'meta-capi.lead_qualified',
          fields: { event_name: 'QualifiedLead', action_source: 'system_generated', 'user_data.lead_id': '1234567890123456', 'custom_data.event_source': 'crm' },
        },
        event: normalized({ context: { environment: 'prod', data_source: 'crm' } }),
        attribution: {},
        identifiers: { 'user_data.em': EM },
      })]);
      expect(req.body).to.equal(JSON.stringify({
        data: [{
          event_name: 'QualifiedLead',
          event_time: 1760000000,
          event_id: 'ORD-1',
          action_source: 'system_generated',
          user_data: { em: EM, lead_id: '1234567890123456' },
          custom_data: { event_source: 'crm' },
        }],
      }));
    });

    it('accepts rule fields already nested and leaves out an empty custom_data', () => {
      const [a] = build([item({ native: { ruleId: 'x', fields: { event_name: 'Lead' } }, attribution: {} })]);
      expect(JSON.parse(a.body).data[0]).not.to.have.property('custom_data');
      const [b] = build([item({ native: { ruleId: 'x', fields: { event_name: 'Lead', custom_data: { value: 1 }, 'custom_data.currency': 'RON' } } })]);
      expect(JSON.parse(b.body).data[0].custom_data).to.deep.equal({ value: 1, currency: 'RON' });
    });

    it('sends several values of one identifier as an array', () => {
      const [req] = build([item({ identifiers: { 'user_data.em': [EM, PH] }, attribution: {} })]);
      expect(JSON.parse(req.body).data[0].user_data.em).to.deep.equal([EM, PH]);
    });

    it('splits at 1,000 events, keeping order and eventIds', () => {
      const items = Array.from({ length: 2501 }, (_, i) => item({ eventId: `E${i}` }));
      const reqs = build(items);
      expect(reqs.map((r) => r.eventIds.length)).to.deep.equal([1000, 1000, 501]);
      expect(reqs[0].eventIds[0]).to.equal('E0');
      expect(reqs[2].eventIds[500]).to.equal('E2500');
      for (const r of reqs) {
        const ids = JSON.parse(r.body).data.map((d: { event_id: string }) => d.event_id);
        expect(ids).to.deep.equal(r.eventIds);
      }
    });

    it('sends events Meta would refuse alone, so they cannot sink a batch', () => {
      const day = 86_400_000;
      const reqs = build([
        item({ eventId: 'fresh-1' }),
        item({ eventId: 'stale', receivedAt: NOW - 8 * day }),
        item({ eventId: 'nobody', identifiers: {}, attribution: {}, event: normalized({ context: { environment: 'prod', data_source: 'crm' } }) }),
        item({ eventId: 'store-30d', receivedAt: NOW - 30 * day, event: normalized({ context: { environment: 'prod', data_source: 'physical_store' } }) }),
        item({ eventId: 'fresh-2' }),
      ]);
      expect(reqs.map((r) => r.eventIds)).to.deep.equal([['fresh-1', 'store-30d', 'fresh-2'], ['stale'], ['nobody']]);
    });

    it('returns nothing for no items', () => {
      expect(build([])).to.deep.equal([]);
    });
  });

  describe('classifyResponse', () => {
    const cases: OutcomeCase[] = [
      ['200 events_received', res(200, { events_received: 1, messages: [], fbtrace_id: 'A' }), 'success'],
      ['204 empty', res(204), 'success'],
      ['400 code 100 (invalid parameter)', res(400, { error: { message: 'Invalid parameter', type: 'OAuthException', code: 100, error_subcode: 2804003, fbtrace_id: 'A' } }), 'permanent'],
      ['401 code 190 (token)', res(401, { error: { message: 'Error validating access token', type: 'OAuthException', code: 190 } }), 'permanent'],
      ['403 code 10 (permission)', res(403, { error: { message: 'Permission denied', code: 10 } }), 'permanent'],
      ['403 code 200 (permission range)', res(403, { error: { message: 'Permissions error', code: 200 } }), 'permanent'],
      ['400 code 3 (capability)', res(400, { error: { code: 3 } }), 'permanent'],
      ['400 code 1 (unknown, transient)', res(400, { error: { message: 'An unknown error occurred', code: 1 } }), 'retryable'],
      ['500 code 2 (service)', res(500, { error: { code: 2, is_transient: true } }), 'retryable'],
      ['400 code 4 (app rate limit)', res(400, { error: { code: 4 } }), 'retryable'],
      ['400 code 17 (user rate limit)', res(400, { error: { code: 17 } }), 'retryable'],
      ['400 code 32 (page rate limit)', res(400, { error: { code: 32 } }), 'retryable'],
      ['400 code 613 (rate limit)', res(400, { error: { code: 613 } }), 'retryable'],
      ['400 code 80004 (ads throttling)', res(400, { error: { code: 80004 } }), 'retryable'],
      ['400 code 341 (limit reached)', res(400, { error: { code: 341 } }), 'retryable'],
      ['400 code 368 (temporarily blocked)', res(400, { error: { code: 368 } }), 'retryable'],
      ['400 unknown code marked transient', res(400, { error: { code: 12345, is_transient: true } }), 'retryable'],
      ['400 unknown code', res(400, { error: { code: 12345 } }), 'permanent'],
      ['200 with a Graph error in the body', res(200, { error: { code: 100, message: 'bad' } }), 'permanent'],
      ['200 with a throttling error in the body', res(200, { error: { code: 17 } }), 'retryable'],
      ['truncated 400 body with code 613', res(400, '{"error":{"message":"Calls to this api have exceeded the rate limit.","type":"OAuthException","code":613,"fbtra'), 'retryable'],
      ['400 without a body', res(400, ''), 'permanent'],
      ['401 html', res(401, '<html>nope</html>'), 'permanent'],
      ['403 without a code', res(403, { error: { message: 'forbidden' } }), 'permanent'],
      ['408', res(408), 'retryable'],
      ['429 with Retry-After', res(429, '', { 'retry-after': '120' }), 'retryable', 120_000],
      ['429 with Retry-After in another case', res(429, '', { 'Retry-After': '7' }), 'retryable', 7_000],
      ['429 with an HTTP-date Retry-After', res(429, '', { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' }), 'retryable'],
      ['500', res(500, 'oops'), 'retryable'],
      ['503 with Retry-After', res(503, '', { 'retry-after': '30' }), 'retryable', 30_000],
      ['302', res(302, '', { location: 'https://elsewhere.example/' }), 'permanent'],
    ];
    outcomeCases(plugin.classifyResponse, cases);

    it('names the Graph code and subcode in the message', () => {
      const c = plugin.classifyResponse(res(400, { error: { message: 'Invalid parameter', code: 100, error_subcode: 2804003 } }));
      expect(c).to.deep.equal({ outcome: 'permanent', message: 'HTTP 400, Graph error code 100/2804003: Invalid parameter', others: 'split' });
    });

    it('an invalid parameter (code 100) refuses the whole batch naming no event: the request is split, with Meta\'s own words as the reason', () => {
      const c = plugin.classifyResponse(res(400, { error: {
        message: 'Invalid parameter', type: 'OAuthException', code: 100, error_subcode: 2804019, is_transient: false,
        error_user_title: 'Invalid event time', error_user_msg: 'The event_time is more than 7 days in the past.', fbtrace_id: 'A',
      } }));
      expect(c).to.deep.equal({
        outcome: 'permanent', others: 'split',
        message: 'HTTP 400, Graph error code 100/2804019: Invalid parameter (Invalid event time: The event_time is more than 7 days in the past.)',
      });
      // About the pixel or the token, not an event: every half would fail the same, so no split.
      expect(plugin.classifyResponse(res(400, { error: { message: 'Unsupported post request. Object with ID does not exist', code: 100, error_subcode: 33 } }))).to.not.have.property('others');
      expect(plugin.classifyResponse(res(401, { error: { message: 'Error validating access token', code: 190 } }))).to.not.have.property('others');
    });
  });
});
