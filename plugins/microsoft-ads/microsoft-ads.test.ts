// The microsoft-ads plugin on its own: the definition and its settings, batching at 1,000,
// the msclkid and visitor-id forms, replies classified (the CAPI guide's own 401 and 400
// bodies among them), and one request really sent to a loopback double through `endpoint`.
import { expect } from 'chai';
import type { OutgoingItem } from 'tracklane/sdk';
import { startDestinationDouble, shippedPlugins, outcomeCases, settingsSchemaCases, type OutcomeCase, normalizedEvent, reply as res } from 'tracklane/sdk/testing';
import { msclkidUuid, parseUetMsclkid, parseUetVid } from './attribution.ts';
import { microsoftEmail } from './email-hash.ts';
import plugin from './index.ts';
import type { MicrosoftAdsSettings } from './settings.ts';

const RECEIVED = 1_760_000_000_999;
const SETTINGS: MicrosoftAdsSettings = { tag_id: '97247724', access_token: 'uet-capi-TOKEN' };
const EXT = 'e'.repeat(64);

function item(n: number, receivedAt = RECEIVED): OutgoingItem {
  return {
    native: { ruleId: 'microsoft-ads.generate_lead', fields: { eventName: 'generate_lead' } },
    eventId: `L-${n}`,
    messageId: 'msg_0123456789abcdef0123456789abcdef',
    event: normalizedEvent({ event: { name: 'lead_created', exchange_rate: 1, id: `L-${n}` }, context: { environment: 'prod', data_source: 'crm' } }),
    identifiers: { 'userData.externalId': EXT },
    attribution: {},
    receivedAt,
  };
}

describe('microsoft-ads plugin', () => {
  describe('definition', () => {
    it('loads from its folder like any plugin, advertising gated by marketing consent, batches of 1,000', async () => {
      const registry = await shippedPlugins();
      expect(registry.get('microsoft-ads')?.plugin.description).to.equal(plugin.description);
      expect(plugin.consent).to.equal('marketing');
      expect(plugin.batch).to.deep.equal({ maxEvents: 1000 });
      expect(plugin.secretSettings).to.deep.equal(['access_token']);
      expect(plugin.identifiers?.forms).to.include({ phone: 'e164' });
      expect(registry.get('microsoft-ads')!.validateSettings({ tag_id: 'abc', access_token: 't' })).to.deep.equal(['tag_id: must match pattern "^[0-9]{1,20}$"']);
    });
  });

  describe('settings schema', () => {
    settingsSchemaCases(plugin.settingsSchema, {
      accepts: [
        ['the two required keys', SETTINGS],
        ['an endpoint, an allow-list and a consent category', { ...SETTINGS, endpoint: 'http://127.0.0.1:9000', events: ['checkout_completed'], consent_category: 'analytics' }],
      ],
      refuses: [
        ['no access token', { tag_id: '1' }],
        ['a tag id that is not digits', { ...SETTINGS, tag_id: 'uet-1' }],
        ['a token with spaces', { ...SETTINGS, access_token: 'two words' }],
        ['an unknown key', { ...SETTINGS, pixel_id: '1' }],
        ['a test_event_code: Microsoft has no test mode, so a test would be a real conversion', { ...SETTINGS, test_event_code: 'T1' }],
      ],
    });
  });

  describe('identifier forms', () => {
    it('msclkid becomes the UUID the API takes; the _uetmsclkid cookie loses its _uet prefix; anything else is dropped', () => {
      expect(msclkidUuid('dd4afcccb1c94a4cad9544dd7e5006ab')).to.equal('dd4afccc-b1c9-4a4c-ad95-44dd7e5006ab');
      expect(msclkidUuid('DD4AFCCC-B1C9-4A4C-AD95-44DD7E5006AB')).to.equal('dd4afccc-b1c9-4a4c-ad95-44dd7e5006ab');
      expect(msclkidUuid('dd4afcccb1c94a4cad9544dd7e5006')).to.equal(undefined);
      expect(parseUetMsclkid('_uetb1240587f865192a03586c5b000314f5')).to.equal('b1240587-f865-192a-0358-6c5b000314f5');
      expect(parseUetMsclkid('_uetnot-a-click-id')).to.equal(undefined);
      expect(parseUetVid('fe910b70374111f185174b19733c8403')).to.equal('fe910b70374111f185174b19733c8403');
      expect(parseUetVid('fe910b70|1')).to.equal(undefined);
    });

    it('e-mail in Microsoft\'s form: trimmed, lower-cased, every dot and the +alias out of the local part, for any domain', () => {
      expect(microsoftEmail(' John.Doe+Shop@Contoso.com ')).to.equal('johndoe@contoso.com');
      expect(microsoftEmail('j.o.h.n@sub.example.co.uk')).to.equal('john@sub.example.co.uk');
      expect(microsoftEmail('+only@example.com')).to.equal(null);
      expect(microsoftEmail('not an address')).to.equal(null);
    });
  });

  describe('buildRequests', () => {
    it('splits 1,001 events into 1,000 and 1, with the bearer token, every event id carried', () => {
      const items = Array.from({ length: 1001 }, (_, i) => item(i));
      const reqs = plugin.buildRequests({ settings: SETTINGS, items, now: RECEIVED });
      expect(reqs.map((r) => r.eventIds.length)).to.deep.equal([1000, 1]);
      expect(reqs[0].url).to.equal('https://capi.uet.microsoft.com/v1/97247724/events');
      expect(reqs[0].headers.authorization).to.equal('Bearer uet-capi-TOKEN');
      expect(JSON.parse(reqs[1].body)).to.deep.equal({
        data: [{ eventType: 'custom', eventId: 'L-1000', eventName: 'generate_lead', eventTime: 1760000000, adStorageConsent: 'G', userData: { externalId: EXT } }],
        continueOnValidationError: true,
        dataProvider: 'tracklane',
      });
    });

    it('a rule\'s own eventTime wins over the receive time', () => {
      const own = { ...item(1), native: { ruleId: 'acct.lead', fields: { eventName: 'generate_lead', eventTime: 1759990000 } } };
      const [req] = plugin.buildRequests({ settings: SETTINGS, items: [own], now: RECEIVED });
      expect(JSON.parse(req.body).data[0].eventTime).to.equal(1759990000);
    });
  });

  describe('warnings', () => {
    it('an event past the 7-day window is named', () => {
      const old = item(2, RECEIVED - 8 * 86_400_000);
      expect(plugin.warnings!({ settings: SETTINGS, items: [old], now: RECEIVED })).to.deep.equal([
        'eventTime is more than 7 days old: Microsoft skips this event',
      ]);
      expect(plugin.warnings!({ settings: SETTINGS, items: [item(3)], now: RECEIVED })).to.deep.equal([]);
    });

    it('an event with no identifier at all (IP and user agent alone) is unmatchable', () => {
      const bare = { ...item(1), identifiers: {} };
      expect(plugin.unmatchable!(bare, SETTINGS)).to.equal(
        'Microsoft needs at least one identifier in userData (msclkid, the _uetvid visitor id, a hashed email or phone, or a customer id); this event has none and would be refused',
      );
      expect(plugin.unmatchable!(item(3), SETTINGS)).to.equal(null);
      expect(plugin.unmatchable!({ ...bare, attribution: { msclkid: 'abc' } }, SETTINGS)).to.equal(null);
    });
  });

  describe('classifyResponse', () => {
    const validationError = {
      error: {
        code: 'ValidationError',
        message: 'One or multiple parameters did not pass validation checks, see details. Note that only the first 10 errors and warnings are shown.',
        details: [
          { index: 0, propertyName: 'data[0].eventType', errorMessage: "'eventType' must be one of the following: pageLoad, custom.", errorCode: 'InvalidEnumValue', isWarning: false },
          { index: 0, propertyName: 'data[0].userData.em', errorMessage: "'em' must be a valid SHA256 string.", errorCode: 'InvalidSha256', isWarning: true },
        ],
      },
    };
    const partial = {
      eventsReceived: 2,
      error: {
        code: 'ValidationError',
        message: 'One or multiple parameters did not pass validation checks, see details.',
        details: [
          { index: 1, propertyName: 'data[1].eventTime', attemptedValue: 1700000000, errorMessage: "'eventTime' must be a valid UNIX UTC timestamp in seconds within last 7 days.", errorCode: 'InvalidEventTime', isWarning: false },
          { index: 2, propertyName: 'data[2].referrerUrl', errorMessage: "'referrerUrl' must be a valid URL.", errorCode: 'InvalidUrl', isWarning: true },
        ],
      },
    };
    const cases: OutcomeCase[] = [
      ['200 with every event received', res(200, { eventsReceived: 3 }), 'success'],
      ['200 with one event skipped and one field dropped', res(200, partial), 'success'],
      ['400 ValidationError (no event valid)', res(400, validationError), 'permanent'],
      ['401 Unauthorized', res(401, { error: { code: 'Unauthorized', message: 'You are not authorized to access this resource.' } }), 'permanent'],
      ['429 with Retry-After', res(429, '', { 'retry-after': '30' }), 'retryable', 30_000],
      ['503', res(503, 'upstream down'), 'retryable'],
      ['a redirect', res(302, ''), 'permanent'],
    ];
    outcomeCases(plugin.classifyResponse, cases);

    it('says which events were skipped (each failed with its own reason) and which fields dropped', () => {
      expect(plugin.classifyResponse(res(200, partial))).to.deep.equal({
        outcome: 'success',
        message: "events received 2; 1 event skipped (data[1].eventTime 'eventTime' must be a valid UNIX UTC timestamp in seconds within last 7 days.); 1 field dropped (data[2].referrerUrl 'referrerUrl' must be a valid URL.)",
        events: [{ index: 1, outcome: 'permanent', message: "Microsoft skipped the event: (data[1].eventTime 'eventTime' must be a valid UNIX UTC timestamp in seconds within last 7 days.)" }],
      });
      expect(plugin.classifyResponse(res(400, validationError))).to.deep.equal({
        outcome: 'permanent',
        message: "HTTP 400, Microsoft error ValidationError (data[0].eventType 'eventType' must be one of the following: pageLoad, custom.)",
        events: [{ index: 0, outcome: 'permanent', message: "Microsoft skipped the event: (data[0].eventType 'eventType' must be one of the following: pageLoad, custom.)" }],
      });
      expect(plugin.classifyResponse(res(401, { error: { code: 'Unauthorized', message: 'You are not authorized to access this resource.' } }))).to.deep.equal({
        outcome: 'permanent', message: 'HTTP 401, Microsoft error Unauthorized: You are not authorized to access this resource.',
      });
    });
  });

  it('sends to a loopback double through the endpoint override, and classifies its reply', async () => {
    const double = await startDestinationDouble();
    try {
      double.script({ status: 200, body: { eventsReceived: 1 } });
      const [req] = plugin.buildRequests({ settings: { ...SETTINGS, endpoint: `${double.url}/` }, items: [item(1)], now: RECEIVED });
      const reply = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body });
      expect(plugin.classifyResponse({ status: reply.status, headers: {}, body: await reply.text() })).to.deep.equal({ outcome: 'success', message: 'events received 1' });
      await double.waitFor(() => double.requests.length === 1);
      const [got] = double.requests;
      expect(got.path).to.equal('/v1/97247724/events');
      expect(got.headers.authorization).to.equal('Bearer uet-capi-TOKEN');
      expect(got.json().data[0].eventId).to.equal('L-1');
    } finally {
      await double.close();
    }
  });
});
