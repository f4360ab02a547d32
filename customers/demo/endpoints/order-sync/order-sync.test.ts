// demo/order-sync version 1 (the first shape, still served) over real HTTP: its example.json
// in both envs, per-order messages, what is stored, the API key, and one refusal per rule
// with the field it names. Version 2 and choosing between them: order-sync-versions.test.ts.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startEndpointHarness, type EndpointHarness, type TestAccount } from 'tracklane/sdk/testing';

const DIR = fileURLToPath(new URL('.', import.meta.url));
/** The demo key (endpoint.json holds only its SHA-256), and version 1 named as its clients name it. */
const KEY = { 'x-api-key': 'demo_order_sync_key_3f9a1c7e52b84d06', 'x-service-endpoint-version': '1' };
const V1_EXAMPLE = JSON.parse(readFileSync(new URL('./versions/1/example.json', import.meta.url), 'utf8'));

describe('demo/order-sync', () => {
  let h: EndpointHarness;
  let viewer: TestAccount;

  before(async () => {
    h = await startEndpointHarness(DIR);
    // A second account with a GA4 destination, used only with env=test: its preview shows
    // the native requests, and nothing is ever queued for delivery.
    viewer = await h.makeAccount();
    await h.server.addDestination(viewer.scriptId, 'ga4', { measurement_id: 'G-ORDERSYNC1', api_secret: 'ga4-demo-secret' });
  });
  after(() => h.close());

  const example = () => structuredClone(V1_EXAMPLE);

  it('env=test: example.json → two checkout_completed and one order_canceled, previewed per destination, one message per order, nothing stored', async () => {
    const r = await h.post(V1_EXAMPLE, { env: 'test', headers: KEY, account: viewer });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.result).to.equal('ok');
    expect(r.body.messages).to.deep.equal([
      'order ORD-10001: checkout_completed, 144.8 EUR, 2 lines',
      'order ORD-10002: checkout_completed, 59 EUR, 1 line',
      'order ORD-09987: canceled → order_canceled',
      'order ORD-09950: shipped, recorded (no standard event for this status)',
      'test mode: nothing was stored or delivered',
    ]);
    const d = r.body.custom_data;
    // order_canceled carries no consent (the ERP does not know it): a warning, not an error.
    expect(d).to.include({ records_processed: 4, validation_status: 'valid_with_warnings', env: 'test' });
    expect(d.events.map((e: any) => [e.name, e.event_id, e.status, e.errors])).to.deep.equal([
      ['checkout_completed', 'ORD-10001', 'would_accept', []],
      ['checkout_completed', 'ORD-10002', 'would_accept', []],
      ['order_canceled', 'ORD-09987', 'would_accept', []],
    ]);
    const first = d.events[0];
    expect(first.data_normalized.products.map((p: any) => [p.id, p.price, p.price_base, p.quantity])).to.deep.equal([
      ['SHOE-42', 119.9, 129.9, 1],
      ['SOCK-3P', 10, 10, 2],
    ]);
    expect(first.data_normalized.context.data_source).to.equal('phone');
    expect(d.events[1].data_normalized.context.data_source, 'settings.default_channel').to.equal('admin');
    const [ga4] = first.preview;
    expect(ga4).to.include({ type: 'ga4', status: 'would_send' });
    expect(ga4.requests[0].url).to.equal('https://www.google-analytics.com/mp/collect?measurement_id=G-ORDERSYNC1&api_secret=****');
    expect(ga4.requests[0].body.events[0].name).to.equal('purchase');
    expect(ga4.requests[0].body.events[0].params).to.include({ transaction_id: 'ORD-10001', value: 144.8, currency: 'EUR' });
    expect(d.records).to.deep.equal([
      { type: 'order_status', key: 'ORD-09950:shipped', data: { order_id: 'ORD-09950', status: 'shipped', changed_at: '2024-05-01T09:27:30Z' } },
    ]);
    expect(await h.server.running.store.events.list({ scriptId: viewer.scriptId })).to.deep.equal([]);
  });

  it('env=production: example.json is committed before the 200 — events through the standard pipeline, the status record alongside', async () => {
    const r = await h.post(V1_EXAMPLE, { env: 'production', headers: KEY });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.messages).to.have.length(4);
    expect(r.body.custom_data).to.include({ records_processed: 4, validation_status: 'valid_with_warnings', env: 'production', records_stored: 1 });
    expect(r.body.custom_data.events).to.deep.equal([
      { name: 'checkout_completed', event_id: 'ORD-10001', status: 'accepted' },
      { name: 'checkout_completed', event_id: 'ORD-10002', status: 'accepted' },
      { name: 'order_canceled', event_id: 'ORD-09987', status: 'accepted' },
    ]);
    const stored = await h.server.running.store.events.list({ scriptId: h.account.scriptId });
    expect(stored.map((e) => [e.name, e.eventId, e.status, e.source]).sort()).to.deep.equal([
      ['checkout_completed', 'ORD-10001', 'accepted', 'custom:order-sync'],
      ['checkout_completed', 'ORD-10002', 'accepted', 'custom:order-sync'],
      ['order_canceled', 'ORD-09987', 'accepted', 'custom:order-sync'],
    ]);
    const rows = await h.server.customRecords({ scriptId: h.account.scriptId, endpoint: 'order-sync' });
    expect(rows.map((x) => [x.type, x.key])).to.deep.equal([['order_status', 'ORD-09950:shipped']]);
  });

  it('the same batch again: every order reported as a duplicate, nothing forwarded twice', async () => {
    const r = await h.post(V1_EXAMPLE, { headers: KEY });
    expect(r.status).to.equal(200);
    expect(r.body.custom_data.events.map((e: any) => e.status)).to.deep.equal(['duplicate', 'duplicate', 'duplicate']);
    expect(r.body.messages.slice(4)).to.deep.equal([
      'event 1 (checkout_completed ORD-10001): duplicate of an event already received; not forwarded again',
      'event 2 (checkout_completed ORD-10002): duplicate of an event already received; not forwarded again',
      'event 3 (order_canceled ORD-09987): duplicate of an event already received; not forwarded again',
    ]);
  });

  it('an order the standard validation refuses is reported in messages and stored as rejected; the rest go through', async () => {
    const body = example();
    body.batch_id = 'ERP-PARTIAL';
    body.orders[0].order_id = 'ORD-20001';
    body.orders[0].items[0].list_price = 99; // below the unit price of 119.9
    body.orders[1].order_id = 'ORD-20002';
    body.status_changes = [];
    const r = await h.post(body, { headers: KEY });
    expect(r.status).to.equal(200);
    expect(r.body.custom_data.validation_status).to.equal('partially_rejected');
    expect(r.body.custom_data.events.map((e: any) => [e.event_id, e.status])).to.deep.equal([['ORD-20001', 'rejected'], ['ORD-20002', 'accepted']]);
    expect(r.body.messages[2]).to.match(/^event 1 \(checkout_completed ORD-20001\): rejected: INCONSISTENT_VALUE: products\[0\]\.price/);
  });

  it('refuses a missing or wrong API key before looking at the body', async () => {
    const missing = await h.post({}, {});
    expect(missing.status).to.equal(401);
    expect(missing.body).to.deep.equal({
      result: 'error',
      messages: ['The X-Api-Key header is missing'],
      error_code: 'AUTH_MISSING',
      error_context: { field: 'X-Api-Key', expected_format: '' },
    });
    const wrong = await h.post(V1_EXAMPLE, { headers: { 'x-api-key': 'demo_order_sync_key_guess' } });
    expect(wrong.status).to.equal(401);
    expect(wrong.body.error_code).to.equal('INVALID_CREDENTIALS');
  });

  const invalid: [string, (b: any) => void, string, string][] = [
    ['no batch_id', (b) => delete b.batch_id, 'batch_id', 'a string of 1 to 64 characters'],
    ['an order number with a space', (b) => { b.orders[0].order_id = 'ORD 10001'; }, 'orders[0].order_id',
      'an order number of 1 to 64 letters, digits, dots, dashes or underscores, such as ORD-10001'],
    ['a lowercase currency', (b) => { b.orders[1].currency = 'eur'; }, 'orders[1].currency', 'a three-letter ISO 4217 currency code in capitals, such as EUR'],
    ['a zero quantity', (b) => { b.orders[0].items[1].quantity = 0; }, 'orders[0].items[1].quantity', 'a whole number from 1 to 10000'],
    ['a fractional quantity', (b) => { b.orders[0].items[0].quantity = 1.5; }, 'orders[0].items[0].quantity', 'a whole number from 1 to 10000'],
    ['placed_at without a time', (b) => { b.orders[0].placed_at = '2024-05-01'; }, 'orders[0].placed_at', 'an ISO 8601 date-time with a time zone, such as 2024-05-01T13:45:00Z'],
    ['a negative total', (b) => { b.orders[1].total = -59; }, 'orders[1].total', 'a number of at least 0'],
    ['an order without items', (b) => { b.orders[1].items = []; }, 'orders[1].items', 'an array of 1 to 200 items, each an object with sku, name, unit_price, quantity'],
    ['a phone not in E.164', (b) => { b.orders[0].customer.phone = '0722 123 456'; }, 'orders[0].customer.phone',
      'a phone number in E.164 form: + then country code and number, digits only, such as +40722123456'],
    ['an unknown status', (b) => { b.status_changes[1].status = 'lost'; }, 'status_changes[1].status', 'one of "canceled", "shipped", "delivered", "refunded"'],
    ['an unknown member', (b) => { b.orders[0].discount = 5; }, 'orders[0].discount',
      'no such field; the allowed fields here are order_id, placed_at, currency, total, shipping_total, channel, coupon, payment_method, consent, customer, items'],
    ['an order number twice in one batch', (b) => { b.orders[1].order_id = 'ORD-10001'; }, 'orders[1].order_id', 'an order number not used earlier in the same batch'],
    ['a batch with nothing in it', (b) => { delete b.orders; delete b.status_changes; }, 'orders', 'an array with at least one order, or a non-empty status_changes'],
  ];
  for (const [what, change, field, expected] of invalid) {
    it(`400 for ${what}: error_context names ${field}`, async () => {
      const body = example();
      change(body);
      const r = await h.post(body, { env: 'test', headers: KEY });
      expect(r.status, r.text).to.equal(400);
      expect(r.body.result).to.equal('error');
      expect(r.body.error_code).to.equal('CUSTOM_VALIDATION_ERROR');
      expect(r.body.error_context).to.deep.equal({ field, expected_format: expected });
    });
  }
});
