// demo/supply-chain-event over real HTTP: signed stock movements and shipment statuses as
// records; a delivery emits order_delivered, which only an account that approved it gets
// accepted; a full return cancels the order; refusals naming their field.
import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { startEndpointHarness, type EndpointHarness, type TestAccount } from 'tracklane/sdk/testing';

const DIR = fileURLToPath(new URL('.', import.meta.url));

describe('demo/supply-chain-event', () => {
  let h: EndpointHarness;
  let unapproved: TestAccount;
  before(async () => {
    h = await startEndpointHarness(DIR, { approveEvents: ['order_delivered'] });
    unapproved = await h.makeAccount({ approveEvents: [] });
  });
  after(() => h.close());

  const example = () => structuredClone(h.example);

  it('env=test: example.json → shipment_status record and order_delivered for an account that approved it; nothing stored', async () => {
    const r = await h.post(h.example, { env: 'test' });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.messages).to.deep.equal([
      'shipment SHP-55190: shipment delivered (FAN Courier)',
      'order ORD-10001: order_delivered',
      'test mode: nothing was stored or delivered',
    ]);
    const d = r.body.custom_data;
    expect(d).to.include({ records_processed: 2, validation_status: 'valid_with_warnings', env: 'test' });
    expect(d.events.map((e: any) => [e.name, e.event_id, e.status])).to.deep.equal([['order_delivered', 'ORD-10001', 'would_accept']]);
    expect(d.records).to.deep.equal([{
      type: 'shipment_status',
      key: 'SHP-55190:shipment_delivered',
      data: {
        shipment_id: 'SHP-55190', order_id: 'ORD-10001', carrier: 'FAN Courier', tracking_number: '2XK9918827',
        status: 'shipment_delivered', warehouse_id: 'WH-CLJ-1', occurred_at: '2024-05-03T11:42:00Z', items: 2,
      },
    }]);
    expect(await h.server.running.store.events.list({ scriptId: h.account.scriptId })).to.deep.equal([]);
  });

  it('env=production: example.json committed; records stored', async () => {
    const r = await h.post(h.example, { env: 'production' });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.custom_data).to.include({ records_stored: 1, env: 'production' });
    expect(r.body.custom_data.events).to.deep.equal([{ name: 'order_delivered', event_id: 'ORD-10001', status: 'accepted' }]);
    const [stored] = await h.server.running.store.events.list({ scriptId: h.account.scriptId });
    expect(stored).to.include({ name: 'order_delivered', source: 'custom:supply-chain-event', status: 'accepted' });
  });

  it('an account that has not approved order_delivered: its only event is rejected, so the request fails with 400 (nothing stored)', async () => {
    const r = await h.post(h.example, { account: unapproved, env: 'test' });
    expect(r.status).to.equal(400);
    expect(r.body.error_code).to.equal('CUSTOM_VALIDATION_ERROR');
    expect(r.body.error_context).to.deep.equal({ field: 'events[0].event.name', expected_format: 'a valid order_delivered event (EVENT_NOT_APPROVED)' });
    expect(r.body.messages).to.deep.equal([
      'event 1 (order_delivered ORD-10001): rejected: EVENT_NOT_APPROVED: event.name: event.name "order_delivered" is not approved for this account; use one of the standard event names or ask the operator to approve it',
    ]);
  });

  it('stock movements are signed by direction: a dispatch takes stock out, an adjustment keeps its sign', async () => {
    const dispatch = { ...example(), event_id: 'SCE-1', event_type: 'shipment_dispatched' };
    const r = await h.post(dispatch, { env: 'test' });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.custom_data.records.filter((x: any) => x.type === 'stock_movement').map((x: any) => [x.key, x.data.sku, x.data.quantity])).to.deep.equal([
      ['SCE-1:0', 'SHOE-42', -1],
      ['SCE-1:1', 'SOCK-3P', -2],
    ]);
    expect(r.body.custom_data.events).to.deep.equal([]);
    const adjust = { event_id: 'SCE-2', event_type: 'stock_adjusted', occurred_at: '2024-05-03T12:00:00Z', warehouse_id: 'WH-CLJ-1', items: [{ sku: 'CAP-01', quantity: -3 }] };
    const a = await h.post(adjust, { env: 'test' });
    expect(a.status, a.text).to.equal(200);
    expect(a.body.custom_data.records.map((x: any) => x.data.quantity)).to.deep.equal([-3]);
  });

  it('a full return cancels the order', async () => {
    const ret = { ...example(), event_id: 'SCE-3', event_type: 'return_received', full_return: true };
    const r = await h.post(ret, { env: 'test' });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.custom_data.events.map((e: any) => [e.name, e.event_id])).to.deep.equal([['order_canceled', 'ORD-10001']]);
    expect(r.body.messages).to.include('order ORD-10001: fully returned → order_canceled');
  });

  const invalid: [string, (b: any) => void, string, string][] = [
    ['no event_id', (b) => delete b.event_id, 'event_id', 'the 3PL\'s event id: 1 to 64 letters, digits, dots, dashes or underscores, such as SCE-88120'],
    ['an unknown event_type', (b) => { b.event_type = 'shipment_lost'; }, 'event_type',
      'one of "shipment_dispatched", "shipment_delivered", "stock_received", "stock_adjusted", "return_received"'],
    ['a warehouse code without WH-', (b) => { b.warehouse_id = 'CLJ-1'; }, 'warehouse_id', 'a warehouse code: WH- then 1 to 20 capital letters, digits or dashes, such as WH-CLJ-1'],
    ['a shipment event without shipment', (b) => delete b.shipment, 'shipment', 'an object with shipment_id, carrier'],
    ['a shipment without carrier', (b) => delete b.shipment.carrier, 'shipment.carrier', 'a string of 1 to 64 characters'],
    ['no items', (b) => { b.items = []; }, 'items', 'an array of 1 to 500 items, each an object with sku, quantity'],
    ['a zero quantity', (b) => { b.items[1].quantity = 0; }, 'items[1].quantity', 'a whole number other than 0, from -100000 to 100000 (negative only for stock_adjusted)'],
    ['a negative quantity on a delivery', (b) => { b.items[0].quantity = -1; }, 'items[0].quantity', 'a whole number above 0 for shipment_delivered'],
    ['full_return on a delivery', (b) => { b.full_return = true; }, 'full_return', 'absent unless event_type is return_received'],
  ];
  for (const [what, change, field, expected] of invalid) {
    it(`400 for ${what}: error_context names ${field}`, async () => {
      const body = example();
      change(body);
      const r = await h.post(body, { env: 'test' });
      expect(r.status, r.text).to.equal(400);
      expect(r.body.error_code).to.equal('CUSTOM_VALIDATION_ERROR');
      expect(r.body.error_context).to.deep.equal({ field, expected_format: expected });
    });
  }
});
