// The pinterest plugin on its own: the definition and its settings, batching at 1,000,
// the action source, replies classified, and one request really sent to a loopback double
// through the `endpoint` override.
import { expect } from 'chai';
import type { OutgoingItem } from 'tracklane/sdk';
import { startDestinationDouble, shippedPlugins, outcomeCases, settingsSchemaCases, type OutcomeCase, normalizedEvent, reply as res } from 'tracklane/sdk/testing';
import { actionSource } from './build-requests.ts';
import plugin from './index.ts';
import type { PinterestSettings } from './settings.ts';

const RECEIVED = 1_760_000_000_999;
const SETTINGS: PinterestSettings = { ad_account_id: '549755885175', access_token: 'pina_TOKEN' };
const EM = 'e'.repeat(64);

function item(n: number): OutgoingItem {
  return {
    native: { ruleId: 'pinterest.lead', fields: { event_name: 'lead' } },
    eventId: `L-${n}`,
    messageId: 'msg_0123456789abcdef0123456789abcdef',
    event: normalizedEvent({ event: { name: 'lead_created', exchange_rate: 1, id: `L-${n}` }, context: { environment: 'prod', data_source: 'crm' } }),
    identifiers: { 'user_data.em': EM },
    attribution: {},
    receivedAt: RECEIVED,
  };
}

describe('pinterest plugin', () => {
  describe('definition', () => {
    it('loads from its folder like any plugin, advertising gated by marketing consent, batches of 1,000', async () => {
      const registry = await shippedPlugins();
      expect(registry.get('pinterest')?.plugin.description).to.equal(plugin.description);
      expect(plugin.consent).to.equal('marketing');
      expect(plugin.batch).to.deep.equal({ maxEvents: 1000 });
      expect(plugin.secretSettings).to.deep.equal(['access_token']);
      expect(plugin.identifiers?.forms).to.include({ phone: 'digits', region: 'us-state-code', postalCode: 'us-zip5', country: 'lower' });
      expect(registry.get('pinterest')!.validateSettings({ ad_account_id: 'abc', access_token: 't' })).to.deep.equal(['ad_account_id: must match pattern "^[0-9]{1,32}$"']);
    });
  });

  describe('settings schema', () => {
    settingsSchemaCases(plugin.settingsSchema, {
      accepts: [
        ['the two required keys', SETTINGS],
        ['test mode, an endpoint and an allow-list', { ...SETTINGS, test: true, endpoint: 'http://127.0.0.1:9000', events: ['checkout_completed'] }],
      ],
      refuses: [
        ['no access token', { ad_account_id: '1' }],
        ['a non-numeric ad account', { ...SETTINGS, ad_account_id: 'act_1' }],
        ['an unknown key', { ...SETTINGS, pixel_id: '1' }],
        ['test as a string', { ...SETTINGS, test: 'yes' }],
      ],
    });
  });

  describe('buildRequests', () => {
    it('splits 1,001 events into 1,000 and 1, with the bearer token, every event id carried', () => {
      const items = Array.from({ length: 1001 }, (_, i) => item(i));
      const reqs = plugin.buildRequests({ settings: SETTINGS, items, now: RECEIVED });
      expect(reqs.map((r) => r.eventIds.length)).to.deep.equal([1000, 1]);
      expect(reqs[0].headers.authorization).to.equal('Bearer pina_TOKEN');
      expect(JSON.parse(reqs[1].body).data[0]).to.deep.equal({
        event_name: 'lead', action_source: 'offline', event_time: 1760000000, event_id: 'L-1000', user_data: { em: [EM] },
      });
    });

    it('in test mode (test_event_code, as `test`) sends with ?test=true, and the preview says so', () => {
      const settings = { ...SETTINGS, test_event_code: 'T1' };
      const [req] = plugin.buildRequests({ settings, items: [item(1)], now: RECEIVED });
      expect(req.url).to.equal('https://api.pinterest.com/v5/ad_accounts/549755885175/events?test=true');
      expect(req.body, 'Pinterest has no test code to send').to.not.contain('T1');
      expect(plugin.warnings!({ settings, items: [item(1)], now: RECEIVED })).to.include(
        'test_event_code is set: Pinterest checks these events and records none; turn it off for real traffic');
    });

    it('action_source follows data_source and, for apps, the user agent', () => {
      const ctx = (data_source: string | undefined, user_agent?: string, url?: string) => ({ environment: 'prod' as const, data_source, user_agent, url });
      expect(actionSource(ctx('website'))).to.equal('web');
      expect(actionSource(ctx(undefined, undefined, 'https://shop.example/'))).to.equal('web');
      expect(actionSource(ctx('app', 'Shop/1 (Linux; Android 14)'))).to.equal('app_android');
      expect(actionSource(ctx('app', 'Shop/1 (iPad; iOS 17)'))).to.equal('app_ios');
      expect(actionSource(ctx('app', 'Shop/1'))).to.equal('offline');
      expect(actionSource(ctx('crm'))).to.equal('offline');
    });
  });

  describe('classifyResponse', () => {
    const cases: OutcomeCase[] = [
      ['200 with every event processed', res(200, { num_events_received: 2, num_events_processed: 2, events: [{ status: 'processed' }, { status: 'processed' }] }), 'success'],
      ['200 with one of two failed', res(200, { num_events_processed: 1, events: [{ status: 'processed' }, { status: 'failed', error_message: 'bad event_time' }] }), 'success'],
      ['200 with every event failed', res(200, { events: [{ status: 'failed', error_message: 'bad event_time' }] }), 'permanent'],
      ['400 invalid parameters', res(400, { code: 1, message: 'Invalid parameters' }), 'permanent'],
      ['401 bad token', res(401, { code: 2, message: 'Authentication failed' }), 'permanent'],
      ['429 with Retry-After', res(429, { code: 8, message: 'Too many requests' }, { 'retry-after': '30' }), 'retryable', 30_000],
      ['503', res(503, 'upstream down'), 'retryable'],
    ];
    outcomeCases(plugin.classifyResponse, cases);

    it('names Pinterest\'s first per-event error', () => {
      expect(plugin.classifyResponse(res(200, { events: [{ status: 'failed', error_message: 'bad event_time' }] }))).to.deep.equal({
        outcome: 'permanent', message: 'HTTP 200, every event failed: bad event_time',
        events: [{ index: 0, outcome: 'permanent', message: 'HTTP 200, Pinterest event failed: bad event_time' }],
      });
    });

    it('each failed event of a 200 (events[], in request order) fails with its own error_message; the others are delivered', () => {
      const reply = res(200, {
        num_events_received: 3, num_events_processed: 1,
        events: [
          { status: 'processed', error_message: '', warning_message: 'The currency field is not a standard value.' },
          { status: 'failed', error_message: 'Event timestamp is more than 7 days in the past.', warning_message: '' },
          { status: 'failed', error_message: 'User data must include em, hashed_maids or client_ip_address and client_user_agent.', warning_message: '' },
        ],
      });
      expect(plugin.classifyResponse(reply)).to.deep.equal({
        outcome: 'success',
        message: 'events processed 1; 2 failed: Event timestamp is more than 7 days in the past.; warning: The currency field is not a standard value.',
        events: [
          { index: 1, outcome: 'permanent', message: 'HTTP 200, Pinterest event failed: Event timestamp is more than 7 days in the past.' },
          { index: 2, outcome: 'permanent', message: 'HTTP 200, Pinterest event failed: User data must include em, hashed_maids or client_ip_address and client_user_agent.' },
        ],
      });
    });
  });

  it('sends to a loopback double through the endpoint override, and classifies its reply', async () => {
    const double = await startDestinationDouble();
    try {
      double.script({ status: 200, body: { num_events_received: 1, num_events_processed: 1, events: [{ status: 'processed' }] } });
      const [req] = plugin.buildRequests({ settings: { ...SETTINGS, endpoint: `${double.url}/`, test: true }, items: [item(1)], now: RECEIVED });
      const reply = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body });
      expect(plugin.classifyResponse({ status: reply.status, headers: {}, body: await reply.text() })).to.deep.equal({ outcome: 'success', message: 'events processed 1' });
      await double.waitFor(() => double.requests.length === 1);
      const [got] = double.requests;
      expect(got.path).to.equal('/v5/ad_accounts/549755885175/events?test=true');
      expect(got.headers.authorization).to.equal('Bearer pina_TOKEN');
      expect(got.json().data[0].event_id).to.equal('L-1');
    } finally {
      await double.close();
    }
  });
});
