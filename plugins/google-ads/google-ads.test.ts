import { expect } from 'chai';
import type { OutgoingItem, PlatformResponse, NormalizedEvent } from 'tracklane/sdk';
import { settingsSchemaCases, normalizedEvent, reply as res } from 'tracklane/sdk/testing';
import { googleDateTime } from './build-requests.ts';
import googleAds from './index.ts';
import type { GoogleAdsSettings } from './settings.ts';

const SETTINGS: GoogleAdsSettings = {
  customer_id: '123-456-7890',
  developer_token: 'dev-tok',
  access_token: 'ya29.token',
  conversion_actions: { checkout_completed: '111', lead_created: 222 },
};
const BASE = 'https://googleads.googleapis.com/v26/customers/1234567890';
const HEADERS = { 'content-type': 'application/json', authorization: 'Bearer ya29.token', 'developer-token': 'dev-tok' };
const RECEIVED = Date.UTC(2026, 10, 21, 9, 5, 7, 890);
const WHEN = '2026-11-21 09:05:07+00:00';
const E1 = '1'.repeat(64);
const E2 = '2'.repeat(64);
const E3 = '3'.repeat(64);
const P1 = '4'.repeat(64);
const P2 = '5'.repeat(64);

const event = (name: string, over: Partial<NormalizedEvent> = {}): NormalizedEvent => normalizedEvent({
  event: { name, exchange_rate: 1 },
  context: { environment: 'prod', data_source: 'website', user_agent: 'UA', overide_ip: '203.0.113.7' },
  ...over,
});

const purchaseFields = {
  conversionAction: '111',
  conversionValue: 99.5,
  currencyCode: 'EUR',
  orderId: 'ORD-1',
  cartData: { localTransactionCost: 5, items: [{ productId: 'SKU-1', quantity: 2, unitPrice: 49.75 }] },
};

function item(over: Partial<OutgoingItem> = {}): OutgoingItem {
  return {
    native: { ruleId: 'google-ads.purchase', fields: purchaseFields },
    eventId: 'ORD-1',
    messageId: 'msg_0123456789abcdef0123456789abcdef',
    event: event('checkout_completed'),
    identifiers: {},
    attribution: { gclid: 'Cj0KCQ-test' },
    receivedAt: RECEIVED,
    ...over,
  };
}

const retraction = (id: string): OutgoingItem => item({
  eventId: id,
  event: event('order_canceled'),
  native: { ruleId: 'google-ads.retract_order', fields: { kind: 'adjustment', adjustmentType: 'RETRACTION', orderId: id, conversionAction: 111 } },
});

const build = (items: OutgoingItem[], settings: GoogleAdsSettings = SETTINGS) =>
  googleAds.buildRequests({ settings, items, now: RECEIVED + 10 });
const bodyOf = (items: OutgoingItem[], settings?: GoogleAdsSettings) => JSON.parse(build(items, settings)[0].body);

describe('google-ads plugin', () => {
  describe('definition', () => {
    it('is named after its folder, advertising, with both tokens secret and its own identifier table', () => {
      expect(googleAds.name).to.equal('google-ads');
      expect(googleAds.category).to.equal('advertising');
      expect(googleAds.secretSettings).to.deep.equal(['developer_token', 'access_token', 'client_secret', 'refresh_token']);
      expect(googleAds.oauth).to.deep.equal({ tokenUrl: 'https://oauth2.googleapis.com/token' });
      expect(googleAds.identifiers?.forms).to.deep.equal({ email: { removeSpaces: true, dropGmailDots: true }, phone: 'e164' });
      expect(Object.keys(googleAds.identifiers?.table ?? {})).to.deep.equal(['hashedEmail', 'hashedPhoneNumber']);
      expect(googleAds.batch).to.deep.equal({ maxEvents: 2000 });
    });
  });

  describe('settingsSchema', () => {
    const noAccessToken = ({ access_token: _a, ...rest }: Record<string, unknown>) => rest;
    const base = { customer_id: '1234567890', developer_token: 'd', access_token: 'a', conversion_actions: { checkout_completed: '123' } };

    const accepted: [string, unknown][] = [
      ['the documented config', base],
      ['a dashed customer id and integer action ids', { ...base, customer_id: '123-456-7890', conversion_actions: { lead_created: 5, lead_closed: '6' } }],
      ['a full conversion action resource name', { ...base, conversion_actions: { checkout_completed: 'customers/1234567890/conversionActions/99' } }],
      ['every optional key', {
        ...base, login_customer_id: '999-888-7777', merchant_id: '123456789', feed_country_code: 'RO', feed_language_code: 'ro',
        api_version: 'v23', validate_only: true, endpoint: 'http://127.0.0.1:8099', test_event_code: 'x',
        events: ['checkout_completed'], consent_category: 'analytics',
      }],
      ['an integer merchant id', { ...base, merchant_id: 42 }],
      ['OAuth instead of an access token', { ...noAccessToken(base), client_id: 'c.apps.googleusercontent.com', client_secret: 's', refresh_token: '1//r', token_url: 'http://127.0.0.1:8098/token' }],
    ];

    const { conversion_actions: _ca, ...noActions } = base;
    const { developer_token: _dt, ...noDevToken } = base;
    const { access_token: _at, ...noAccess } = base;
    const { customer_id: _ci, ...noCustomer } = base;
    const refused: [string, unknown][] = [
      ['a missing conversion_actions', noActions],
      ['a missing developer_token', noDevToken],
      ['a missing access_token', noAccess],
      ['OAuth without its refresh_token', { ...noAccess, client_id: 'c', client_secret: 's' }],
      ['a token_url that is not a URL', { ...base, client_id: 'c', client_secret: 's', refresh_token: 'r', token_url: 'oauth2' }],
      ['a missing customer_id', noCustomer],
      ['a customer id with 9 digits', { ...base, customer_id: '123456789' }],
      ['a customer id with letters', { ...base, customer_id: '123-456-789O' }],
      ['an empty conversion_actions', { ...base, conversion_actions: {} }],
      ['a conversion action id that is not digits', { ...base, conversion_actions: { checkout_completed: 'AW-123/abc' } }],
      ['a conversion action id of 0', { ...base, conversion_actions: { checkout_completed: 0 } }],
      ['a bad login_customer_id', { ...base, login_customer_id: 'mcc' }],
      ['a merchant id with letters', { ...base, merchant_id: 'MC-1' }],
      ['an api_version without v', { ...base, api_version: '26' }],
      ['a three-letter feed country', { ...base, feed_country_code: 'ROU' }],
      ['an unknown key', { ...base, refresh_tokn: 'x' }],
      ['an endpoint that is not a URL', { ...base, endpoint: 'googleads' }],
    ];
    settingsSchemaCases(googleAds.settingsSchema, { accepts: accepted, refuses: refused });
  });

  describe('buildRequests', () => {
    it('builds the exact click conversion request (gclid, identifiers, consent, no cartData without merchant_id)', () => {
      const requests = build([item({ identifiers: { hashedEmail: [E1, E2], hashedPhoneNumber: P1 } })]);
      expect(requests).to.have.length(1);
      const [req] = requests;
      expect(req.method).to.equal('POST');
      expect(req.url).to.equal(`${BASE}:uploadClickConversions`);
      expect(req.headers).to.deep.equal(HEADERS);
      expect(req.eventIds).to.deep.equal(['ORD-1']);
      expect(req.body).to.equal(JSON.stringify({
        conversions: [{
          gclid: 'Cj0KCQ-test',
          conversionAction: 'customers/1234567890/conversionActions/111',
          conversionDateTime: WHEN,
          conversionValue: 99.5,
          currencyCode: 'EUR',
          orderId: 'ORD-1',
          userIdentifiers: [{ hashedEmail: E1 }, { hashedEmail: E2 }, { hashedPhoneNumber: P1 }],
          consent: { adUserData: 'GRANTED' },
        }],
        partialFailure: true,
      }));
    });

    it('adds cartData with the merchant and feed from settings when merchant_id is set', () => {
      const body = bodyOf([item()], { ...SETTINGS, merchant_id: 7654321, feed_country_code: 'ro', feed_language_code: 'RO' });
      expect(body.conversions[0].cartData).to.deep.equal({
        merchantId: '7654321',
        feedCountryCode: 'RO',
        feedLanguageCode: 'ro',
        localTransactionCost: 5,
        items: [{ productId: 'SKU-1', quantity: 2, unitPrice: 49.75 }],
      });
      expect(Object.keys(body.conversions[0]).at(-1)).to.equal('cartData');
    });

    it('leaves cartData out when the rule built no items', () => {
      const body = bodyOf([item({ native: { ruleId: 'r', fields: { ...purchaseFields, cartData: { items: [] } } } })], { ...SETTINGS, merchant_id: '1' });
      expect(body.conversions[0]).not.to.have.property('cartData');
    });

    it('accepts flat dot-path rule fields', () => {
      const body = bodyOf([item({ native: { ruleId: 'r', fields: { conversionAction: '111', 'cartData.items': [{ productId: 'A', quantity: 1, unitPrice: 2 }] } } })],
        { ...SETTINGS, merchant_id: '9' });
      expect(body.conversions[0].cartData).to.deep.equal({ merchantId: '9', items: [{ productId: 'A', quantity: 1, unitPrice: 2 }] });
    });

    it('sends one click id: gclid first, then wbraid, then gbraid', () => {
      const conv = (attribution: OutgoingItem['attribution']) => bodyOf([item({ attribution })]).conversions[0];
      expect(conv({ gclid: 'G', wbraid: 'W' })).to.include({ gclid: 'G' }).and.not.have.property('wbraid');
      expect(conv({ wbraid: 'W', gbraid: 'B' })).to.include({ wbraid: 'W' }).and.not.have.property('gbraid');
      expect(conv({ gbraid: 'B' })).to.include({ gbraid: 'B' });
      expect(Object.keys(conv({}))[0]).to.equal('conversionAction');
    });

    it('prefers a click id the rule supplies (e.g. a gclid stored by a CRM)', () => {
      const body = bodyOf([item({ native: { ruleId: 'r', fields: { ...purchaseFields, gclid: 'FROM-CRM' } }, attribution: { wbraid: 'W' } })]);
      expect(body.conversions[0].gclid).to.equal('FROM-CRM');
      expect(body.conversions[0]).not.to.have.property('wbraid');
    });

    it('caps user identifiers at five, e-mails first', () => {
      const body = bodyOf([item({ identifiers: { hashedEmail: [E1, E2, E3], hashedPhoneNumber: [P1, P2, '6'.repeat(64)] } })]);
      expect(body.conversions[0].userIdentifiers).to.deep.equal([
        { hashedEmail: E1 }, { hashedEmail: E2 }, { hashedEmail: E3 }, { hashedPhoneNumber: P1 }, { hashedPhoneNumber: P2 },
      ]);
    });

    it('sends adUserData DENIED and no identifiers without marketing consent', () => {
      const body = bodyOf([item({
        event: event('checkout_completed', { consent: { analytics: true, personalization: true, marketing: false } }),
        identifiers: { hashedEmail: E1 },
      })]);
      expect(body.conversions[0].consent).to.deep.equal({ adUserData: 'DENIED' });
      expect(body.conversions[0]).not.to.have.property('userIdentifiers');
    });

    it('falls back to the item eventId as orderId when the rule gives none', () => {
      const { orderId: _o, ...noOrder } = purchaseFields;
      const body = bodyOf([item({ eventId: 'tl-evt-9', native: { ruleId: 'r', fields: noOrder } })]);
      expect(body.conversions[0].orderId).to.equal('tl-evt-9');
      expect(Object.keys(body.conversions[0])).to.deep.equal(['gclid', 'conversionAction', 'conversionDateTime', 'conversionValue', 'currencyCode', 'orderId', 'consent']);
    });

    it('keeps a full conversion action resource name as it is', () => {
      const body = bodyOf([item({ native: { ruleId: 'r', fields: { conversionAction: 'customers/555/conversionActions/9' } } })]);
      expect(body.conversions[0].conversionAction).to.equal('customers/555/conversionActions/9');
    });

    it('builds the exact retraction for kind "adjustment", stripping kind', () => {
      const [req] = build([retraction('ORD-9')]);
      expect(req.url).to.equal(`${BASE}:uploadConversionAdjustments`);
      expect(req.headers).to.deep.equal(HEADERS);
      expect(req.body).to.equal(JSON.stringify({
        conversionAdjustments: [{
          adjustmentType: 'RETRACTION',
          orderId: 'ORD-9',
          conversionAction: 'customers/1234567890/conversionActions/111',
          adjustmentDateTime: WHEN,
        }],
        partialFailure: true,
      }));
    });

    it('splits a mixed batch into one request per service, in order of first appearance', () => {
      const requests = build([retraction('C1'), item({ eventId: 'P1' }), retraction('C2')]);
      expect(requests.map((r) => r.url)).to.deep.equal([`${BASE}:uploadConversionAdjustments`, `${BASE}:uploadClickConversions`]);
      expect(requests.map((r) => r.eventIds)).to.deep.equal([['C1', 'C2'], ['P1']]);
    });

    it('refuses an unknown kind, naming the rule', () => {
      expect(() => build([item({ native: { ruleId: 'acct.odd', fields: { kind: 'call' } } })])).to.throw(/acct\.odd.*kind/);
    });

    it('splits at 2,000 conversions per request', () => {
      const items = Array.from({ length: 4001 }, (_, i) => item({ eventId: `E${i}` }));
      const requests = build(items);
      expect(requests.map((r) => r.eventIds.length)).to.deep.equal([2000, 2000, 1]);
      expect(requests.map((r) => JSON.parse(r.body).conversions.length)).to.deep.equal([2000, 2000, 1]);
      expect(requests.flatMap((r) => r.eventIds)).to.deep.equal(items.map((i) => i.eventId));
    });

    it('uses endpoint, api_version, login-customer-id (digits) and validate_only from settings', () => {
      const [req] = build([item()], {
        ...SETTINGS, endpoint: 'http://127.0.0.1:8099/', api_version: 'v23', login_customer_id: '999-888-7777', validate_only: true,
      });
      expect(req.url).to.equal('http://127.0.0.1:8099/v23/customers/1234567890:uploadClickConversions');
      expect(req.headers).to.deep.equal({ ...HEADERS, 'login-customer-id': '9998887777' });
      expect(Object.keys(JSON.parse(req.body))).to.deep.equal(['conversions', 'partialFailure', 'validateOnly']);
      expect(JSON.parse(req.body).validateOnly).to.equal(true);
    });

    it('in test mode (test_event_code) sends validateOnly: true in every upload, click conversions and adjustments', () => {
      const requests = build([retraction('C1'), item({ eventId: 'P1' })], { ...SETTINGS, test_event_code: 'T1' });
      expect(requests.map((r) => r.url)).to.deep.equal([`${BASE}:uploadConversionAdjustments`, `${BASE}:uploadClickConversions`]);
      for (const req of requests) {
        expect(Object.keys(JSON.parse(req.body)).slice(1), req.url).to.deep.equal(['partialFailure', 'validateOnly']);
        expect(JSON.parse(req.body).validateOnly).to.equal(true);
        expect(req.body, 'Google has no test code to send').to.not.contain('T1');
      }
      expect(googleAds.warnings!({ settings: { ...SETTINGS, test_event_code: 'T1' }, items: [item()], now: RECEIVED })[0]).to.match(/^test_event_code is set: every upload carries validateOnly: true/);
      expect(JSON.parse(build([item()])[0].body), 'without it, no validateOnly').to.not.have.property('validateOnly');
    });

    it('formats conversion times as yyyy-mm-dd hh:mm:ss+00:00 in UTC', () => {
      expect(googleDateTime(Date.UTC(2024, 0, 2, 3, 4, 5))).to.equal('2024-01-02 03:04:05+00:00');
    });
  });

  describe('classifyResponse', () => {
    const failure = (...errs: [string, string, number?][]) => ({
      results: [{}],
      partialFailureError: {
        code: 3,
        message: 'partial failure',
        details: [{
          '@type': 'type.googleapis.com/google.ads.googleads.v26.errors.GoogleAdsFailure',
          errors: errs.map(([family, code, index]) => ({
            errorCode: { [family]: code },
            message: 'x',
            ...(index === undefined ? {} : { location: { fieldPathElements: [{ fieldName: 'conversions', index }] } }),
          })),
        }],
      },
    });
    const httpError = (code: number, status: string, errs: [string, string][] = [], extra: Record<string, unknown> = {}) => ({
      error: {
        code, message: 'm', status,
        details: [{ '@type': 'type.googleapis.com/google.ads.googleads.v26.errors.GoogleAdsFailure', errors: errs.map(([f, c]) => ({ errorCode: { [f]: c }, message: 'x' })), ...extra }],
      },
    });
    const H6 = 6 * 3_600_000;

    const cases: [string, PlatformResponse, ReturnType<typeof googleAds.classifyResponse>][] = [
      ['200 with results only', res(200, { results: [{ gclid: 'G', conversionAction: 'c' }] }), { outcome: 'success' }],
      ['200 with an empty body', res(200, ''), { outcome: 'success' }],
      ['200 partial failure, permanent code', res(200, failure(['conversionUploadError', 'UNPARSEABLE_GCLID', 0])),
        { outcome: 'success', message: 'partial failure: UNPARSEABLE_GCLID at #0', events: [{ index: 0, outcome: 'permanent', message: 'Google Ads partial failure: UNPARSEABLE_GCLID (x)' }] }],
      ['200 partial failure, two permanent codes', res(200, failure(['conversionUploadError', 'CLICK_NOT_FOUND', 1], ['conversionUploadError', 'CLICK_NOT_FOUND', 3], ['conversionUploadError', 'EXPIRED_EVENT', 2])),
        { outcome: 'success', message: 'partial failure: CLICK_NOT_FOUND at #1, #3; EXPIRED_EVENT at #2', events: [
          { index: 1, outcome: 'permanent', message: 'Google Ads partial failure: CLICK_NOT_FOUND (x)' },
          { index: 3, outcome: 'permanent', message: 'Google Ads partial failure: CLICK_NOT_FOUND (x)' },
          { index: 2, outcome: 'permanent', message: 'Google Ads partial failure: EXPIRED_EVENT (x)' },
        ] }],
      ['200 partial failure TOO_RECENT_EVENT (retry in 6 h)', res(200, failure(['conversionUploadError', 'TOO_RECENT_EVENT', 0])),
        { outcome: 'success', message: 'partial failure: TOO_RECENT_EVENT at #0', events: [{ index: 0, outcome: 'retryable', message: 'Google Ads partial failure, retry later: TOO_RECENT_EVENT (x)', retryAfterMs: H6 }] }],
      ['200 partial failure TOO_RECENT_CONVERSION_ACTION', res(200, failure(['conversionUploadError', 'TOO_RECENT_CONVERSION_ACTION', 0])),
        { outcome: 'success', message: 'partial failure: TOO_RECENT_CONVERSION_ACTION at #0', events: [{ index: 0, outcome: 'retryable', message: 'Google Ads partial failure, retry later: TOO_RECENT_CONVERSION_ACTION (x)', retryAfterMs: H6 }] }],
      ['200 adjustment TOO_RECENT_CONVERSION (retry in 24 h)', res(200, failure(['conversionAdjustmentUploadError', 'TOO_RECENT_CONVERSION', 0])),
        { outcome: 'success', message: 'partial failure: TOO_RECENT_CONVERSION at #0', events: [{ index: 0, outcome: 'retryable', message: 'Google Ads partial failure, retry later: TOO_RECENT_CONVERSION (x)', retryAfterMs: 24 * 3_600_000 }] }],
      ['200 partial failure TRANSIENT_ERROR', res(200, failure(['internalError', 'TRANSIENT_ERROR', 0])),
        { outcome: 'success', message: 'partial failure: TRANSIENT_ERROR at #0', events: [{ index: 0, outcome: 'retryable', message: 'Google Ads partial failure, retry later: TRANSIENT_ERROR (x)' }] }],
      ['200 partial failure RESOURCE_EXHAUSTED', res(200, failure(['quotaError', 'RESOURCE_EXHAUSTED'])),
        { outcome: 'retryable', message: 'Google Ads partial failure, retry later: RESOURCE_EXHAUSTED' }],
      ['200 partial failure, each conversion by its own codes', res(200, failure(['conversionUploadError', 'INVALID_CONVERSION_ACTION', 0], ['internalError', 'INTERNAL_ERROR', 1])),
        { outcome: 'success', message: 'partial failure: INVALID_CONVERSION_ACTION at #0; INTERNAL_ERROR at #1', events: [
          { index: 0, outcome: 'permanent', message: 'Google Ads partial failure: INVALID_CONVERSION_ACTION (x)' },
          { index: 1, outcome: 'retryable', message: 'Google Ads partial failure, retry later: INTERNAL_ERROR (x)' },
        ] }],
      ['200 partial failure where the conversion already exists', res(200, failure(['conversionUploadError', 'ORDER_ID_ALREADY_IN_USE', 0])),
        { outcome: 'success', message: 'partial failure: ORDER_ID_ALREADY_IN_USE at #0', events: [{ index: 0, outcome: 'success', message: 'already recorded: ORDER_ID_ALREADY_IN_USE (x)' }] }],
      ['200 retraction of an already retracted conversion', res(200, failure(['conversionAdjustmentUploadError', 'CONVERSION_ALREADY_RETRACTED', 0])),
        { outcome: 'success', message: 'partial failure: CONVERSION_ALREADY_RETRACTED at #0', events: [{ index: 0, outcome: 'success', message: 'already recorded: CONVERSION_ALREADY_RETRACTED (x)' }] }],
      ['200 partial failure without parsable details', res(200, { partialFailureError: { code: 3, message: 'bad' } }),
        { outcome: 'permanent', message: 'Google Ads partial failure (code 3): bad' }],
      ['200 with an empty partialFailureError', res(200, { partialFailureError: {} }), { outcome: 'success' }],
      ['302', res(302, '', { location: 'https://accounts.google.com' }),
        { outcome: 'permanent', message: 'Google Ads answered HTTP 302 (redirects are not followed; check the endpoint)' }],
      ['400 INVALID_ARGUMENT with a request error', res(400, httpError(400, 'INVALID_ARGUMENT', [['conversionUploadError', 'TOO_MANY_CONVERSIONS_IN_REQUEST']])),
        { outcome: 'permanent', message: 'Google Ads answered HTTP 400 INVALID_ARGUMENT: TOO_MANY_CONVERSIONS_IN_REQUEST' }],
      ['401', res(401, httpError(401, 'UNAUTHENTICATED', [['authenticationError', 'OAUTH_TOKEN_EXPIRED']])),
        { outcome: 'permanent', message: 'Google Ads answered HTTP 401 UNAUTHENTICATED: OAUTH_TOKEN_EXPIRED' }],
      ['403', res(403, httpError(403, 'PERMISSION_DENIED', [['authorizationError', 'DEVELOPER_TOKEN_NOT_APPROVED']])),
        { outcome: 'permanent', message: 'Google Ads answered HTTP 403 PERMISSION_DENIED: DEVELOPER_TOKEN_NOT_APPROVED' }],
      ['404 with an HTML page (sunset API version)', res(404, '<!DOCTYPE html><title>Error 404</title>'),
        { outcome: 'permanent', message: 'Google Ads answered HTTP 404' }],
      ['408', res(408), { outcome: 'retryable', message: 'Google Ads answered HTTP 408' }],
      ['429 with Retry-After', res(429, httpError(429, 'RESOURCE_EXHAUSTED', [['quotaError', 'RESOURCE_EXHAUSTED']]), { 'Retry-After': '120' }),
        { outcome: 'retryable', message: 'Google Ads answered HTTP 429 RESOURCE_EXHAUSTED: RESOURCE_EXHAUSTED', retryAfterMs: 120_000 }],
      ['429 with a retryDelay in the error details', res(429, httpError(429, 'RESOURCE_EXHAUSTED', [['quotaError', 'RESOURCE_EXHAUSTED']], { retryDelay: '30s' })),
        { outcome: 'retryable', message: 'Google Ads answered HTTP 429 RESOURCE_EXHAUSTED: RESOURCE_EXHAUSTED', retryAfterMs: 30_000 }],
      ['500', res(500, httpError(500, 'INTERNAL', [['internalError', 'INTERNAL_ERROR']])),
        { outcome: 'retryable', message: 'Google Ads answered HTTP 500 INTERNAL: INTERNAL_ERROR' }],
      ['503 with Retry-After', res(503, 'unavailable', { 'retry-after': '7' }),
        { outcome: 'retryable', message: 'Google Ads answered HTTP 503', retryAfterMs: 7000 }],
    ];
    for (const [what, response, expected] of cases) {
      it(what, () => expect(googleAds.classifyResponse(response)).to.deep.equal(expected));
    }
  });
});
