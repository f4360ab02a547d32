// The reddit plugin on its own: the definition and its settings, Reddit's e-mail and IP
// normal forms, the _rdt_uuid cookie, batching at 1,000 (and events near the seven-day
// limit alone), the action source, offline events without browser ids, replies
// classified, and one request really sent to a loopback double through `endpoint`.
import { expect } from 'chai';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OutgoingItem } from 'tracklane/sdk';
import { loadPlugins, startDestinationDouble, outcomeCases, settingsSchemaCases, type OutcomeCase, normalizedEvent, reply as res } from 'tracklane/sdk/testing';
import { actionSource } from './build-requests.ts';
import { normaliseIp, parseRdtUuid, redditCanonicalEmail, redditEmailHash } from './identifiers.ts';
import plugin from './index.ts';
import type { RedditSettings } from './settings.ts';

const RECEIVED = 1_760_000_000_999;
const DAY = 86_400_000;
const SETTINGS: RedditSettings = { pixel_id: 'a2_gp7k2m9xq1', access_token: 'rdt_TOKEN' };
const PH = 'e'.repeat(64);

function item(n: number, over: Partial<OutgoingItem> = {}): OutgoingItem {
  return {
    native: { ruleId: 'reddit.lead', fields: { 'type.tracking_type': 'LEAD' } },
    eventId: `L-${n}`,
    messageId: 'msg_0123456789abcdef0123456789abcdef',
    event: normalizedEvent({ event: { name: 'lead_created', exchange_rate: 1, id: `L-${n}` }, context: { environment: 'prod', data_source: 'crm' } }),
    identifiers: { 'user.phone_number': PH },
    attribution: {},
    receivedAt: RECEIVED,
    ...over,
  };
}

const bodyOf = (body: string) => JSON.parse(body).data;

describe('reddit plugin', () => {
  describe('definition', () => {
    it('loads from its folder like any plugin, advertising gated by marketing consent, batches of 1,000', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'tl-reddit-'));
      try {
        symlinkSync(fileURLToPath(new URL('.', import.meta.url)), join(dir, 'reddit'));
        const registry = await loadPlugins(dir);
        expect(registry.get('reddit')?.plugin.description).to.equal(plugin.description);
        expect(registry.get('reddit')!.validateSettings({ pixel_id: 'a2 x', access_token: 't' })).to.deep.equal(['pixel_id: must match pattern "^[A-Za-z0-9_]{1,64}$"']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      expect(plugin.consent).to.equal('marketing');
      expect(plugin.batch).to.deep.equal({ maxEvents: 1000 });
      expect(plugin.secretSettings).to.deep.equal(['access_token']);
    });
  });

  describe('settings schema', () => {
    settingsSchemaCases(plugin.settingsSchema, {
      accepts: [
        ['the two required keys', SETTINGS],
        ['a test id, an endpoint and an allow-list', { ...SETTINGS, test_event_code: 't2_abc', endpoint: 'http://127.0.0.1:9000', events: ['checkout_completed'] }],
      ],
      refuses: [
        ['no access token', { pixel_id: 'a2_1' }],
        ['no pixel id', { access_token: 't' }],
        ['v2\'s test_mode flag (v3 takes a test id)', { ...SETTINGS, test_mode: true }],
        ['an ad account id instead of the pixel', { ...SETTINGS, ad_account_id: 'a2_1' }],
      ],
    });
  });

  describe('normal forms', () => {
    it('e-mail: lower-cased, alias and the local part\'s other characters removed (Reddit\'s example), digests kept', () => {
      expect(redditCanonicalEmail('Al.ice$+Apple@Example.Com')).to.equal('alice@example.com');
      expect(redditCanonicalEmail(' first_last-1@Mail.Example.co.uk ')).to.equal('firstlast1@mail.example.co.uk');
      expect(redditCanonicalEmail('+tag@example.com')).to.equal(null);
      expect(redditCanonicalEmail('not an address')).to.equal(null);
      expect(redditEmailHash('Al.ice$+Apple@Example.Com')).to.equal('ff8d9819fc0e12bf0d24892e45987e249a28dce836a85cad60e28eaaa8c6d976');
      expect(redditEmailHash('FF8D9819FC0E12BF0D24892E45987E249A28DCE836A85CAD60E28EAAA8C6D976')).to.equal('ff8d9819fc0e12bf0d24892e45987e249a28dce836a85cad60e28eaaa8c6d976');
      expect(redditEmailHash(undefined)).to.equal(undefined);
    });

    it('IP: IPv4 trimmed, IPv6 in its canonical text', () => {
      expect(normaliseIp(' 203.0.113.9 ')).to.equal('203.0.113.9');
      expect(normaliseIp('2A02:2F0E:1234:0000:0:0:0:1')).to.equal('2a02:2f0e:1234::1');
    });

    it('_rdt_uuid: the pixel\'s <ms>.<uuid> value, anything else refused', () => {
      expect(parseRdtUuid('1677712978045.b8f7eb7d-b357-437b-8bd3-e1c8166c7132')).to.equal('1677712978045.b8f7eb7d-b357-437b-8bd3-e1c8166c7132');
      expect(parseRdtUuid('b8f7eb7d-b357-437b-8bd3-e1c8166c7132')).to.equal(undefined);
    });
  });

  describe('buildRequests', () => {
    it('splits 1,001 events into 1,000 and 1, with the bearer token, every event id carried', () => {
      const items = Array.from({ length: 1001 }, (_, i) => item(i));
      const reqs = plugin.buildRequests({ settings: SETTINGS, items, now: RECEIVED });
      expect(reqs.map((r) => r.eventIds.length)).to.deep.equal([1000, 1]);
      expect(reqs[0].headers.authorization).to.equal('Bearer rdt_TOKEN');
      expect(bodyOf(reqs[1].body)).to.deep.equal({
        events: [{ event_at: RECEIVED, action_source: 'OTHER', type: { tracking_type: 'LEAD' }, metadata: { conversion_id: 'L-1000' }, user: { phone_number: PH } }],
      });
    });

    it('an event near the seven-day limit goes alone, so it cannot fail the others\' request', () => {
      const old = item(9, { receivedAt: RECEIVED - 7 * DAY + 1_000 });
      const reqs = plugin.buildRequests({ settings: SETTINGS, items: [item(1), old, item(2)], now: RECEIVED });
      expect(reqs.map((r) => r.eventIds)).to.deep.equal([['L-1', 'L-2'], ['L-9']]);
    });

    it('action_source follows data_source; a PHYSICAL_STORE event carries no click id, IP, user agent or uuid', () => {
      const ctx = (data_source: string | undefined, url?: string) => ({ environment: 'prod' as const, data_source, url });
      expect(actionSource(ctx('website'))).to.equal('WEBSITE');
      expect(actionSource(ctx(undefined, 'https://shop.example/'))).to.equal('WEBSITE');
      expect(actionSource(ctx('app'))).to.equal('APP');
      expect(actionSource(ctx('crm'))).to.equal('OTHER');
      const store = item(3, {
        native: { ruleId: 'acct.store', fields: { 'type.tracking_type': 'PURCHASE', action_source: 'PHYSICAL_STORE' } },
        event: normalizedEvent({ event: { name: 'checkout_completed', exchange_rate: 1 }, context: { environment: 'prod', data_source: 'website', url: 'https://shop.example/', user_agent: 'UA', overide_ip: '203.0.113.9' } }),
        attribution: { rdt_cid: 'CID', rdt_uuid: '1677712978045.b8f7eb7d-b357-437b-8bd3-e1c8166c7132' },
      });
      const [req] = plugin.buildRequests({ settings: SETTINGS, items: [store], now: RECEIVED });
      expect(bodyOf(req.body).events[0]).to.deep.equal({
        event_at: RECEIVED, action_source: 'PHYSICAL_STORE', type: { tracking_type: 'PURCHASE' }, metadata: { conversion_id: 'L-3' }, user: { phone_number: PH },
      });
    });
  });

  describe('classifyResponse', () => {
    const cases: OutcomeCase[] = [
      ['200, processed', res(200, { data: { message: 'Successfully processed 2 conversion events.' } }), 'success'],
      ['400, an invalid event fails the request', res(400, { error: { code: 400, message: 'There were 1 invalid conversion events. None were processed.' } }), 'permanent'],
      ['401 bad token', res(401, { error: { code: 401, message: 'UNAUTHORIZED' } }), 'permanent'],
      ['403 no permission on the pixel', res(403, { error: { code: 403, message: 'You\'re not authorized to post conversions to Pixel ID a2_1.' } }), 'permanent'],
      ['429 with Retry-After', res(429, { error: { code: 429, message: 'Too many requests/events within timeframe.' } }, { 'retry-after': '30' }), 'retryable', 30_000],
      ['500 service unavailable', res(500, { error: { code: 500, message: 'The service is currently unavailable. No conversion events were processed.' } }), 'retryable'],
      ['503 without a body', res(503, 'upstream down'), 'retryable'],
    ];
    outcomeCases(plugin.classifyResponse, cases);

    it('names Reddit\'s message', () => {
      expect(plugin.classifyResponse(res(200, { data: { message: 'Successfully processed 2 conversion events.' } }))).to.deep.equal({
        outcome: 'success', message: 'Successfully processed 2 conversion events.',
      });
      expect(plugin.classifyResponse(res(400, { error: { code: 400, message: 'There were 1 invalid conversion events. None were processed.' } }))).to.deep.equal({
        outcome: 'permanent', message: 'HTTP 400, Reddit error: There were 1 invalid conversion events. None were processed.', others: 'split',
      });
      expect(plugin.classifyResponse(res(400, { error: { code: 400, message: 'bad request' } }))).to.not.have.property('others');
    });
  });

  it('sends to a loopback double through the endpoint override, and classifies its reply', async () => {
    const double = await startDestinationDouble();
    try {
      double.script({ status: 200, body: { data: { message: 'Successfully processed 1 conversion events.' } } });
      const [req] = plugin.buildRequests({ settings: { ...SETTINGS, endpoint: `${double.url}/`, test_event_code: 't2_test' }, items: [item(1)], now: RECEIVED });
      const reply = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body });
      expect(plugin.classifyResponse({ status: reply.status, headers: {}, body: await reply.text() })).to.deep.equal({
        outcome: 'success', message: 'Successfully processed 1 conversion events.',
      });
      await double.waitFor(() => double.requests.length === 1);
      const [got] = double.requests;
      expect(got.path).to.equal('/api/v3/pixels/a2_gp7k2m9xq1/conversion_events');
      expect(got.headers.authorization).to.equal('Bearer rdt_TOKEN');
      expect(got.json().data.test_id).to.equal('t2_test');
      expect(got.json().data.events[0].metadata.conversion_id).to.equal('L-1');
    } finally {
      await double.close();
    }
  });
});
