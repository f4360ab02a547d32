// The linkedin plugin on its own: the definition and its settings, batching at 5,000, the
// conversion URN, replies classified (per-element statuses of a BATCH_CREATE 200 included),
// the warnings, and one request really sent to a loopback double through `endpoint`.
import { expect } from 'chai';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OutgoingItem } from 'tracklane/sdk';
import { loadPlugins, startDestinationDouble, tempDir, outcomeCases, settingsSchemaCases, type OutcomeCase, normalizedEvent, reply as res } from 'tracklane/sdk/testing';
import { conversionUrn } from './build-requests.ts';
import plugin from './index.ts';
import type { LinkedInSettings } from './settings.ts';

const RECEIVED = 1_760_000_000_999;
const SETTINGS: LinkedInSettings = { access_token: 'AQV_TOKEN', conversion_rules: { lead_created: '104012' } };
const EM = 'e'.repeat(64);

function item(n: number, extra: Partial<OutgoingItem> = {}): OutgoingItem {
  return {
    native: { ruleId: 'linkedin.lead', fields: { conversion: '104012' } },
    eventId: `L-${n}`,
    messageId: 'msg_0123456789abcdef0123456789abcdef',
    event: normalizedEvent({ event: { name: 'lead_created', exchange_rate: 1, id: `L-${n}` }, context: { environment: 'prod', data_source: 'crm' } }),
    identifiers: { sha256Email: EM },
    attribution: {},
    receivedAt: RECEIVED,
    ...extra,
  };
}

describe('linkedin plugin', () => {
  describe('definition', () => {
    it('loads from its folder like any plugin, advertising gated by marketing consent, batches of 5,000', async () => {
      // A plugins directory holding this folder alone: the loader's checks, whatever state its siblings are in.
      const dir = tempDir('tl-linkedin-');
      symlinkSync(fileURLToPath(new URL('.', import.meta.url)), join(dir, 'linkedin'), 'dir');
      const registry = await loadPlugins(dir);
      expect(registry.get('linkedin')?.plugin.description).to.equal(plugin.description);
      expect(plugin.consent).to.equal('marketing');
      expect(plugin.batch).to.deep.equal({ maxEvents: 5000 });
      expect(plugin.secretSettings).to.deep.equal(['access_token', 'client_secret', 'refresh_token']);
      expect(plugin.oauth).to.deep.equal({ tokenUrl: 'https://www.linkedin.com/oauth/v2/accessToken' });
      expect(plugin.identifiers?.forms).to.include({ name: 'trim', country: 'upper' });
      expect(registry.get('linkedin')!.validateSettings({ access_token: 't', conversion_rules: { lead_created: 'abc' } })).to.have.length.greaterThan(0);
    });
  });

  describe('settings schema', () => {
    settingsSchemaCases(plugin.settingsSchema, {
      accepts: [
        ['the two required keys', SETTINGS],
        ['rule ids as numbers and URNs, an api_version, an endpoint and an allow-list', {
          ...SETTINGS, conversion_rules: { checkout_completed: 104013, lead_qualified: 'urn:lla:llaPartnerConversion:104014' },
          api_version: '202606', endpoint: 'http://127.0.0.1:9000', events: ['checkout_completed'],
        }],
        ['OAuth instead of an access token', { conversion_rules: { lead_created: '1' }, client_id: '86abc', client_secret: 's', refresh_token: 'AQX' }],
      ],
      refuses: [
        ['no access token', { conversion_rules: { lead_created: '1' } }],
        ['OAuth without its client_secret', { conversion_rules: { lead_created: '1' }, client_id: '86abc', refresh_token: 'AQX' }],
        ['no conversion rules', { access_token: 't' }],
        ['an empty conversion_rules', { access_token: 't', conversion_rules: {} }],
        ['a rule id that is not digits or the URN', { access_token: 't', conversion_rules: { lead_created: 'urn:li:conversion:1' } }],
        ['an api_version that is not YYYYMM', { ...SETTINGS, api_version: '2026-03' }],
        ['an unknown key', { ...SETTINGS, ad_account_id: '1' }],
        ['a test_event_code: LinkedIn has no test mode, so a test would be a real conversion', { ...SETTINGS, test_event_code: 'T1' }],
        ['an empty test_event_code', { ...SETTINGS, test_event_code: '' }],
      ],
    });
  });

  describe('buildRequests', () => {
    it('splits 5,001 events into 5,000 and 1, BATCH_CREATE with the versioned headers, every event id carried', () => {
      const items = Array.from({ length: 5001 }, (_, i) => item(i));
      const reqs = plugin.buildRequests({ settings: SETTINGS, items, now: RECEIVED });
      expect(reqs.map((r) => r.eventIds.length)).to.deep.equal([5000, 1]);
      expect(reqs[0].url).to.equal('https://api.linkedin.com/rest/conversionEvents');
      expect(reqs[0].headers).to.deep.equal({
        'content-type': 'application/json', authorization: 'Bearer AQV_TOKEN', 'linkedin-version': '202603',
        'x-restli-protocol-version': '2.0.0', 'x-restli-method': 'BATCH_CREATE',
      });
      expect(JSON.parse(reqs[1].body)).to.deep.equal({
        elements: [{
          conversion: 'urn:lla:llaPartnerConversion:104012', conversionHappenedAt: RECEIVED,
          user: { userIds: [{ idType: 'SHA256_EMAIL', idValue: EM }] }, eventId: 'L-5000',
        }],
      });
    });

    it('api_version replaces the default LinkedIn-Version', () => {
      const [req] = plugin.buildRequests({ settings: { ...SETTINGS, api_version: '202606' }, items: [item(1)], now: RECEIVED });
      expect(req.headers['linkedin-version']).to.equal('202606');
    });

    it('the conversion rule id becomes its URN, once', () => {
      expect(conversionUrn('104012')).to.equal('urn:lla:llaPartnerConversion:104012');
      expect(conversionUrn(104012)).to.equal('urn:lla:llaPartnerConversion:104012');
      expect(conversionUrn('urn:lla:llaPartnerConversion:104012')).to.equal('urn:lla:llaPartnerConversion:104012');
    });

    it('userInfo goes only with both names; a value without a currency is left out', () => {
      const lone = item(1, {
        native: { ruleId: 'linkedin.lead', fields: { conversion: '1', conversionValue: { amount: 10 }, user: { userInfo: { companyName: 'Acme' } } } },
        identifiers: { 'userInfo.firstName': 'jane', 'userInfo.countryCode': 'RO' },
      });
      const [req] = plugin.buildRequests({ settings: SETTINGS, items: [lone], now: RECEIVED });
      expect(JSON.parse(req.body).elements[0]).to.deep.equal({
        conversion: 'urn:lla:llaPartnerConversion:1', conversionHappenedAt: RECEIVED, user: { userIds: [] }, eventId: 'L-1',
      });
    });
  });

  describe('warnings', () => {
    const warn = (i: OutgoingItem) => plugin.warnings!({ settings: SETTINGS, items: [i], now: RECEIVED });
    it('says when only one name is known', () => {
      expect(warn(item(1, { identifiers: { 'userInfo.firstName': 'jane' } }))).to.deep.equal([
        'LinkedIn takes userInfo only with both first and last name; with one of them it is left out',
      ]);
      expect(warn(item(1))).to.deep.equal([]);
      expect(warn(item(1, { identifiers: {}, attribution: { li_fat_id: 'abc' } }))).to.deep.equal([]);
    });

    it('calls an event unmatchable without a hashed e-mail, li_fat_id or both names', () => {
      const never = (i: OutgoingItem) => plugin.unmatchable!(i, SETTINGS);
      expect(never(item(1, { identifiers: { 'userInfo.firstName': 'jane' } }))).to.equal(
        'LinkedIn matches a conversion by a hashed email, the li_fat_id click id or first and last name together; this event has none (userIds would be empty) and cannot be attributed',
      );
      expect(never(item(1, { identifiers: { 'userInfo.firstName': 'jane', 'userInfo.lastName': 'doe' } }))).to.equal(null);
      expect(never(item(1, { identifiers: {}, attribution: { li_fat_id: 'abc' } }))).to.equal(null);
      expect(never(item(1))).to.equal(null);
    });

    it('says when LinkedIn-tagged traffic arrives without li_fat_id', () => {
      const event = normalizedEvent({ event: { name: 'lead_created', exchange_rate: 1 }, context: { environment: 'prod', landing_url: 'https://shop.example/?utm_source=LinkedIn&utm_medium=paid' } });
      expect(warn(item(1, { event }))).to.deep.equal([
        'the landing URL has utm_source=linkedin but no li_fat_id: turn on enhanced conversion tracking in Campaign Manager so LinkedIn adds li_fat_id to ad clicks',
      ]);
      expect(warn(item(1, { event, attribution: { li_fat_id: 'abc' } }))).to.deep.equal([]);
    });
  });

  describe('classifyResponse', () => {
    const ok = { status: 201 };
    const bad = { status: 400, error: { status: 400, message: 'conversionHappenedAt is older than 90 days' } };
    const cases: OutcomeCase[] = [
      ['200 with every element 201', res(200, { elements: [ok, ok] }), 'success'],
      ['207 with every element 201', res(207, { elements: [ok] }), 'success'],
      ['200 with one of two elements 400', res(200, { elements: [ok, bad] }), 'success'],
      ['200 with every element 400', res(200, { elements: [bad, bad] }), 'permanent'],
      ['200 with every element 500, Retry-After', res(200, { elements: [{ status: 500 }] }, { 'retry-after': '5' }), 'retryable', 5000],
      ['201 with no body (one event)', res(201, ''), 'success'],
      ['400 invalid body', res(400, { status: 400, serviceErrorCode: 100, message: 'Invalid param' }), 'permanent'],
      ['401 expired token', res(401, { status: 401, serviceErrorCode: 65601, message: 'The token used in the request has expired' }), 'permanent'],
      ['403 missing rw_conversions', res(403, { status: 403, message: 'Not enough permissions' }), 'permanent'],
      ['426 retired version', res(426, { status: 426, message: 'Requested version 202301 is not active' }), 'permanent'],
      ['429 with Retry-After', res(429, { status: 429, message: 'Resource level throttle limit' }, { 'retry-after': '30' }), 'retryable', 30_000],
      ['500', res(500, 'upstream down'), 'retryable'],
      ['503', res(503, { status: 503, message: 'Service Unavailable' }), 'retryable'],
    ];
    outcomeCases(plugin.classifyResponse, cases);

    it('names the failed elements and LinkedIn\'s first message; each failed element is settled by its own', () => {
      expect(plugin.classifyResponse(res(200, { elements: [ok, bad] }))).to.deep.equal({
        outcome: 'success', message: 'HTTP 200, 1 of 2 failed (first: status 400, conversionHappenedAt is older than 90 days)',
        events: [{ index: 1, outcome: 'permanent', message: 'HTTP 200, element status 400, conversionHappenedAt is older than 90 days' }],
      });
      expect(plugin.classifyResponse(res(401, { status: 401, serviceErrorCode: 65601, message: 'The token used in the request has expired' }))).to.deep.equal({
        outcome: 'permanent',
        message: 'HTTP 401, LinkedIn error serviceErrorCode 65601: The token used in the request has expired (the access token is invalid or expired: update access_token)',
      });
    });
  });

  it('a 422 naming elements ("Index: N, ERROR :: …") fails those with LinkedIn\'s reason and resends the others', () => {
    const message = 'Index: 1, ERROR :: /user/userIds/0/idValue :: "not-a-hash" is not a valid SHA256 hash.\nIndex: 4, ERROR :: /conversionHappenedAt :: The timestamp is older than 90 days.';
    expect(plugin.classifyResponse(res(422, { status: 422, message }))).to.deep.equal({
      outcome: 'permanent',
      message: `HTTP 422, LinkedIn error: ${message.slice(0, 300)}`,
      events: [
        { index: 1, outcome: 'permanent', message: 'HTTP 422, LinkedIn error: /user/userIds/0/idValue :: "not-a-hash" is not a valid SHA256 hash.' },
        { index: 4, outcome: 'permanent', message: 'HTTP 422, LinkedIn error: /conversionHappenedAt :: The timestamp is older than 90 days.' },
      ],
      others: 'resend',
    });
    expect(plugin.classifyResponse(res(422, { status: 422, message: 'Invalid request' }))).to.deep.equal({ outcome: 'permanent', message: 'HTTP 422, LinkedIn error: Invalid request' });
  });

  it('sends to a loopback double through the endpoint override, and classifies its reply', async () => {
    const double = await startDestinationDouble();
    try {
      double.script({ status: 200, body: { elements: [{ status: 201 }] } });
      const [req] = plugin.buildRequests({ settings: { ...SETTINGS, endpoint: `${double.url}/` }, items: [item(1)], now: RECEIVED });
      const reply = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body });
      expect(plugin.classifyResponse({ status: reply.status, headers: {}, body: await reply.text() })).to.deep.equal({ outcome: 'success', message: '1 conversion events created' });
      await double.waitFor(() => double.requests.length === 1);
      const [got] = double.requests;
      expect(got.path).to.equal('/rest/conversionEvents');
      expect(got.headers).to.include({ authorization: 'Bearer AQV_TOKEN', 'linkedin-version': '202603', 'x-restli-protocol-version': '2.0.0', 'x-restli-method': 'BATCH_CREATE' });
      expect(got.json().elements[0].eventId).to.equal('L-1');
    } finally {
      await double.close();
    }
  });
});
