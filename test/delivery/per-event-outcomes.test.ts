// One bad event costs only itself. Three events go to each platform in one batched request;
// a loopback double answers as the platform documents for one bad event among them, and the
// two good ones end `delivered` while the bad one ends `failed` with the platform's own reason:
// Google Ads names it by index in a 200's partialFailureError; Microsoft skips it inside a 200
// (continueOnValidationError) and names its index; LinkedIn refuses the BATCH_CREATE whole with
// 422 "Index: N, ERROR :: …" (the others are sent again without it); Reddit refuses the whole
// request naming none ("None were processed": the request is split until the bad one is alone).
// Pinterest names each failed event in a 200 (`events[].status`); Snap refuses the request with
// 400 INVALID naming the event (`event`: the others are sent again without it); Meta (code 100)
// and TikTok (code 40002) refuse the whole batch naming none (split until the bad one is alone).
import { expect } from 'chai';
import type { RecordedRequest, ScriptedResponse } from '../helpers/destination-double.ts';
import { STORE_KINDS, STORE_LABEL, storeHarness } from '../helpers/stores.ts';
import { checkout, useFixtureWithDouble } from './delivery-fixture.ts';

const BAD = 'ORD-BAD';
const IDS = ['ORD-1', BAD, 'ORD-3'];

interface Platform {
  type: string;
  /** The event ids a request carries, in order. */
  ids(req: RecordedRequest): string[];
  /** The platform's answer when the event at `bad` is invalid, and the reason the delivery must show. */
  refuse(bad: number, count: number): ScriptedResponse;
  reason: string;
}

const PLATFORMS: Platform[] = [
  {
    type: 'google-ads',
    ids: (r) => r.json<{ conversions: { orderId: string }[] }>().conversions.map((c) => c.orderId),
    refuse: (bad, count) => ({
      status: 200,
      body: {
        results: Array.from({ length: count }, (_, i) => (i === bad ? {} : { gclid: 'Cj0KCQ-test', conversionAction: 'customers/1234567890/conversionActions/1001' })),
        partialFailureError: {
          code: 3,
          message: 'The gclid could not be decoded., at conversions[1].gclid',
          details: [{
            '@type': 'type.googleapis.com/google.ads.googleads.v26.errors.GoogleAdsFailure',
            errors: [{
              errorCode: { conversionUploadError: 'UNPARSEABLE_GCLID' }, message: 'The gclid could not be decoded.',
              location: { fieldPathElements: [{ fieldName: 'conversions', index: bad }, { fieldName: 'gclid' }] },
            }],
          }],
        },
      },
    }),
    reason: 'Google Ads partial failure: UNPARSEABLE_GCLID (The gclid could not be decoded.)',
  },
  {
    type: 'linkedin',
    ids: (r) => r.json<{ elements: { eventId: string }[] }>().elements.map((e) => e.eventId),
    refuse: (bad) => ({
      status: 422,
      body: { status: 422, message: `Index: ${bad}, ERROR :: /conversionHappenedAt :: The conversion happened more than 90 days ago.` },
    }),
    reason: 'HTTP 422, LinkedIn error: /conversionHappenedAt :: The conversion happened more than 90 days ago.',
  },
  {
    type: 'reddit',
    ids: (r) => r.json<{ data: { events: { metadata: { conversion_id: string } }[] } }>().data.events.map((e) => e.metadata.conversion_id),
    refuse: () => ({ status: 400, body: { error: { code: 400, message: 'There were 1 invalid conversion events. None were processed.' } } }),
    reason: 'HTTP 400, Reddit error: There were 1 invalid conversion events. None were processed.',
  },
  {
    type: 'meta-capi',
    ids: dataEventIds,
    refuse: () => ({
      status: 400,
      body: {
        error: {
          message: 'Invalid parameter', type: 'OAuthException', code: 100, error_subcode: 2804050, is_transient: false,
          error_user_title: 'Invalid custom data', error_user_msg: 'The value of the currency parameter is not a valid ISO 4217 code.', fbtrace_id: 'AbC1',
        },
      },
    }),
    reason: 'HTTP 400, Graph error code 100/2804050: Invalid parameter (Invalid custom data: The value of the currency parameter is not a valid ISO 4217 code.)',
  },
  {
    type: 'tiktok',
    ids: dataEventIds,
    refuse: () => ({ status: 200, body: { code: 40002, message: 'Invalid value for currency: XXX', request_id: '202611281855260001', data: {} } }),
    reason: 'HTTP 200, TikTok code 40002: Invalid value for currency: XXX',
  },
  {
    type: 'pinterest',
    ids: dataEventIds,
    refuse: (bad, count) => ({
      status: 200,
      body: {
        num_events_received: count, num_events_processed: count - 1,
        events: Array.from({ length: count }, (_, i) => (i === bad
          ? { status: 'failed', error_message: 'Event timestamp is more than 7 days in the past.', warning_message: '' }
          : { status: 'processed', error_message: '', warning_message: '' })),
      },
    }),
    reason: 'HTTP 200, Pinterest event failed: Event timestamp is more than 7 days in the past.',
  },
  {
    type: 'snapchat',
    ids: dataEventIds,
    refuse: (bad) => ({
      status: 400,
      body: { status: 'INVALID', event: bad, reason: 'Missing price and/or currency in Purchase events', errors: { codes: ['INVALID_CURRENCY'], error_msgs: ['currency must be a valid ISO 4217 code'] } },
    }),
    reason: 'HTTP 400, Snap found the event invalid: currency must be a valid ISO 4217 code',
  },
  {
    type: 'microsoft-ads',
    ids: (r) => r.json<{ data: { eventId: string }[] }>().data.map((e) => e.eventId),
    refuse: (bad, count) => ({
      status: 200,
      body: {
        eventsReceived: count - 1,
        error: {
          code: 'ValidationError',
          message: 'One or multiple parameters did not pass validation checks, see details. Note that only the first 10 errors and warnings are shown.',
          details: [{
            index: bad, propertyName: `data[${bad}].eventTime`, attemptedValue: 1, errorCode: 'InvalidEventTime', isWarning: false,
            errorMessage: "'eventTime' must be a valid UNIX UTC timestamp in seconds within last 7 days.",
          }],
        },
      },
    }),
    reason: "Microsoft skipped the event: (data[1].eventTime 'eventTime' must be a valid UNIX UTC timestamp in seconds within last 7 days.)",
  },
];

/** `data[].event_id`: Meta, TikTok, Pinterest and Snap carry the event id there. */
function dataEventIds(r: RecordedRequest): string[] {
  return r.json<{ data: { event_id: string }[] }>().data.map((e) => e.event_id);
}

for (const kind of STORE_KINDS) describe(`delivery (${STORE_LABEL[kind]}): each event of a batched request settled by its own verdict`, function () {
  this.timeout(20_000);
  const harness = storeHarness(kind);
  const t = useFixtureWithDouble({ open: () => harness.open() });

  for (const p of PLATFORMS) {
    it(`${p.type}: in a three-event batch with one bad event, the two good ones are delivered and the bad one failed with the platform's reason`, async () => {
      const scriptId = await t.f.account();
      const dest = await t.f.destination(scriptId, p.type, t.dbl.url);
      t.dbl.otherwise((req) => {
        const ids = p.ids(req);
        const bad = ids.indexOf(BAD);
        return bad < 0 ? ok(p.type, ids.length) : p.refuse(bad, ids.length);
      });
      const url = 'https://shop.example.com/thanks?gclid=Cj0KCQ-test';
      for (const id of IDS) {
        await t.f.ingest(scriptId, checkout(id, { context: { environment: 'prod', data_source: 'website', url, user_agent: 'Mozilla/5.0 test', overide_ip: '203.0.113.9' } }));
      }
      await t.f.dispatcher().runOnce();

      expect(p.ids(t.dbl.requests[0]), 'the three events went out in one request').to.deep.equal(IDS);
      const rows = await t.f.store.deliveries.list({ destinationId: dest.id, limit: 10 });
      const by = (id: string) => rows.find((r) => r.eventId === id)!;
      expect(by('ORD-1'), 'ORD-1').to.include({ status: 'delivered' });
      expect(by('ORD-3'), 'ORD-3').to.include({ status: 'delivered' });
      expect(by(BAD)).to.include({ status: 'failed', lastError: p.reason });
    });
  }
});

/** The platform's documented success for `count` events. */
function ok(type: string, count: number): ScriptedResponse {
  switch (type) {
    case 'linkedin': return { status: 200, body: { elements: Array.from({ length: count }, () => ({ status: 201 })) } };
    case 'reddit': return { status: 200, body: { data: { message: `Successfully processed ${count} conversion events.` } } };
    case 'microsoft-ads': return { status: 200, body: { eventsReceived: count } };
    case 'meta-capi': return { status: 200, body: { events_received: count, messages: [], fbtrace_id: 'AbC1' } };
    case 'tiktok': return { status: 200, body: { code: 0, message: 'OK', request_id: '202611281855260002', data: {} } };
    case 'pinterest': return { status: 200, body: { num_events_received: count, num_events_processed: count, events: Array.from({ length: count }, () => ({ status: 'processed', error_message: '', warning_message: '' })) } };
    case 'snapchat': return { status: 200, body: { status: 'VALID', reason: 'Events processed' } };
    default: return { status: 200, body: { results: Array.from({ length: count }, () => ({})) } };
  }
}
