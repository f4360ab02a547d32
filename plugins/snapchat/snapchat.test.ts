// The snapchat plugin on its own: the definition and its settings, batching at 1,000 with
// events Snap will refuse sent alone, the action source, replies classified, and one request
// really sent to a loopback double through the `endpoint` override.
import { expect } from 'chai';
import type { OutgoingItem } from 'tracklane/sdk';
import { startDestinationDouble, shippedPlugins, outcomeCases, settingsSchemaCases, type OutcomeCase, normalizedEvent, reply as res } from 'tracklane/sdk/testing';
import { actionSource, MAX_AGE_MS } from './build-requests.ts';
import plugin from './index.ts';
import type { SnapchatSettings } from './settings.ts';

const RECEIVED = 1_760_000_000_999;
const PIXEL = '1ec32188-754e-4be2-8e55-c949a984a39f';
const SETTINGS: SnapchatSettings = { pixel_id: PIXEL, access_token: 'snap_TOKEN' };
const EM = 'e'.repeat(64);

function item(n: number, fields: Partial<OutgoingItem> = {}): OutgoingItem {
  return {
    native: { ruleId: 'snapchat.sign_up', fields: { event_name: 'SIGN_UP' } },
    eventId: `L-${n}`,
    messageId: 'msg_0123456789abcdef0123456789abcdef',
    event: normalizedEvent({ event: { name: 'lead_created', exchange_rate: 1, id: `L-${n}` }, context: { environment: 'prod', data_source: 'crm' } }),
    identifiers: { 'user_data.em': EM },
    attribution: {},
    receivedAt: RECEIVED,
    ...fields,
  };
}

describe('snapchat plugin', () => {
  describe('definition', () => {
    it('loads from its folder like any plugin, advertising gated by marketing consent, batches of 1,000', async () => {
      const registry = await shippedPlugins();
      expect(registry.get('snapchat')?.plugin.description).to.equal(plugin.description);
      expect(plugin.consent).to.equal('marketing');
      expect(plugin.batch).to.deep.equal({ maxEvents: 1000 });
      expect(plugin.secretSettings).to.deep.equal(['access_token']);
      expect(plugin.identifiers?.forms).to.include({ phone: 'digits', name: 'no-punctuation', region: 'us-state-code', postalCode: 'us-zip5', country: 'lower' });
      expect(registry.get('snapchat')!.validateSettings({ pixel_id: 'a b', access_token: 't' })).to.deep.equal(['pixel_id: must match pattern "^[0-9A-Za-z-]{1,64}$"']);
    });
  });

  describe('settings schema', () => {
    settingsSchemaCases(plugin.settingsSchema, {
      accepts: [
        ['the two required keys', SETTINGS],
        ['a test code, an endpoint and an allow-list', { ...SETTINGS, test_event_code: 'T1', endpoint: 'http://127.0.0.1:9000', events: ['checkout_completed'] }],
      ],
      refuses: [
        ['no access token', { pixel_id: PIXEL }],
        ['a token with a space', { ...SETTINGS, access_token: 'a b' }],
        ['an unknown key', { ...SETTINGS, snap_app_id: '1' }],
        ['an empty test code', { ...SETTINGS, test_event_code: '' }],
      ],
    });
  });

  describe('buildRequests', () => {
    it('splits 1,001 events into 1,000 and 1, token in the query, every event id carried', () => {
      const reqs = plugin.buildRequests({ settings: SETTINGS, items: Array.from({ length: 1001 }, (_, i) => item(i)), now: RECEIVED });
      expect(reqs.map((r) => r.eventIds.length)).to.deep.equal([1000, 1]);
      expect(reqs[0].url).to.equal(`https://tr.snapchat.com/v3/${PIXEL}/events?access_token=snap_TOKEN`);
      expect(JSON.parse(reqs[1].body).data[0]).to.deep.equal({
        event_name: 'SIGN_UP', event_time: 1760000000, event_id: 'L-1000', action_source: 'OFFLINE', user_data: { em: [EM] },
      });
    });

    it('an event past 37 days or without a match key goes alone, so Snap\'s refusal cannot sink the batch', () => {
      const old = item(2, { receivedAt: RECEIVED - MAX_AGE_MS });
      const anonymous = item(3, { identifiers: {} });
      const reqs = plugin.buildRequests({ settings: SETTINGS, items: [item(1), old, item(4), anonymous], now: RECEIVED });
      expect(reqs.map((r) => r.eventIds)).to.deep.equal([['L-1', 'L-4'], ['L-2'], ['L-3']]);
      expect(plugin.warnings!({ settings: SETTINGS, items: [old], now: RECEIVED })).to.include('an event is older than Snap\'s 37-day limit: Snap refuses it');
    });

    it('action_source is WEB for website events, OFFLINE otherwise (app events included: MOBILE_APP needs a Snap App ID)', () => {
      const ctx = (data_source: string | undefined, url?: string) => ({ environment: 'prod' as const, data_source, url });
      expect(actionSource(ctx('website'))).to.equal('WEB');
      expect(actionSource(ctx(undefined, 'https://shop.example/'))).to.equal('WEB');
      expect(actionSource(ctx('app'))).to.equal('OFFLINE');
      expect(actionSource(ctx('crm'))).to.equal('OFFLINE');
    });
  });

  describe('classifyResponse', () => {
    const cases: OutcomeCase[] = [
      ['200 VALID', res(200, { status: 'VALID', reason: 'Event processed' }), 'success'],
      ['200 from /validate with one of two events invalid', res(200, { status: 'VALID', event_logs: [{ event: 0, status: 'VALID' }, { event: 1, status: 'INVALID', errors: { codes: ['E1'], error_msgs: ['Timestamp out of range'] } }] }), 'success'],
      ['200 with status INVALID', res(200, { status: 'INVALID', reason: 'Unhashed PII' }), 'permanent'],
      ['400 INVALID (insufficient PII)', res(400, { status: 'INVALID', reason: 'Insufficient PII' }), 'permanent'],
      ['401 bad token', res(401, { status: 'INVALID', reason: 'Unauthorized' }), 'permanent'],
      ['429 with Retry-After', res(429, 'slow down', { 'retry-after': '30' }), 'retryable', 30_000],
      ['503', res(503, 'upstream down'), 'retryable'],
    ];
    outcomeCases(plugin.classifyResponse, cases);

    it('names Snap\'s first reason or error message', () => {
      expect(plugin.classifyResponse(res(400, { status: 'INVALID', errors: { codes: ['E1'], error_msgs: ['Missing price and/or currency'] } }))).to.deep.equal({
        outcome: 'permanent', message: 'HTTP 400, Snap error: Missing price and/or currency', others: 'split',
      });
      expect(plugin.classifyResponse(res(200, { status: 'VALID', event_logs: [{ status: 'INVALID', errors: { error_msgs: ['Unhashed PII'] } }] }))).to.deep.equal({
        outcome: 'permanent', message: 'HTTP 200, Snap found the events invalid: Unhashed PII',
        events: [{ index: 0, outcome: 'permanent', message: 'HTTP 200, Snap found the event invalid: Unhashed PII' }],
      });
    });

    it('event logs name events by index: each INVALID one fails with its own messages, the others are delivered', () => {
      const reply = res(200, {
        status: 'VALID', test_event: true,
        event_logs: [
          { event: 0, status: 'VALID', warnings: [] },
          { event: 1, status: 'INVALID', errors: { codes: ['E1'], error_msgs: ['Timestamp out of range'] } },
          { event: 2, status: 'VALID' },
        ],
      });
      expect(plugin.classifyResponse(reply)).to.deep.equal({
        outcome: 'success', message: 'VALID; 1 of 3 events invalid: Timestamp out of range',
        events: [{ index: 1, outcome: 'permanent', message: 'HTTP 200, Snap found the event invalid: Timestamp out of range' }],
      });
    });

    it('a 400 INVALID naming its event fails that one and resends the others; naming none, it splits the request', () => {
      expect(plugin.classifyResponse(res(400, { status: 'INVALID', event: 2, reason: 'Insufficient PII' }))).to.deep.equal({
        outcome: 'permanent', message: 'HTTP 400, Snap error: Insufficient PII',
        events: [{ index: 2, outcome: 'permanent', message: 'HTTP 400, Snap found the event invalid: Insufficient PII' }],
        others: 'resend',
      });
      expect(plugin.classifyResponse(res(400, { status: 'INVALID', reason: 'Insufficient PII' }))).to.have.property('others', 'split');
      expect(plugin.classifyResponse(res(401, { status: 'INVALID', reason: 'Unauthorized' }))).to.not.have.property('others');
    });
  });

  it('sends to a loopback double through the endpoint override, and classifies its reply', async () => {
    const double = await startDestinationDouble();
    try {
      double.script({ status: 200, body: { status: 'VALID', reason: 'Event processed' } });
      const [req] = plugin.buildRequests({ settings: { ...SETTINGS, endpoint: `${double.url}/` }, items: [item(1)], now: RECEIVED });
      const reply = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body });
      expect(plugin.classifyResponse({ status: reply.status, headers: {}, body: await reply.text() })).to.deep.equal({ outcome: 'success', message: 'VALID' });
      await double.waitFor(() => double.requests.length === 1);
      const [got] = double.requests;
      expect(got.path).to.equal(`/v3/${PIXEL}/events?access_token=snap_TOKEN`);
      expect(got.json().data[0].event_id).to.equal('L-1');
    } finally {
      await double.close();
    }
  });
});
