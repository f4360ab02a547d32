// env=test of a custom endpoint answers within endpoint 2's 1 MiB however many events the
// handler produces: the first TEST_PREVIEW_EVENTS are previewed in full, the rest are
// validated and counted. A handler producing 1,000 checkouts for four destinations used to
// be answered with every one previewed, many times the size of the request.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { TEST_RESPONSE_MAX_BYTES } from '../../src/http/bound-response.ts';
import { boundTestAnswer, TEST_PREVIEW_EVENTS } from '../../src/customers/bound-test-answer.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/test-app.ts';
import { SETTINGS } from '../delivery/delivery-fixture.ts';
import { customersRoot, writeEndpoint } from './fixtures.ts';

/** One checkout_completed per order of the body, each with a few products; order 3 refused (no currency). */
const CHECKOUTS = `
export default (body: { orders: number; note?: string }) => ({
  events: Array.from({ length: body.orders }, (_, i) => ({
    event: { name: 'checkout_completed', id: 'ORD-' + i, value: 120.5, ...(i !== 3 && { currency: 'EUR' }) },
    context: { environment: 'prod', data_source: 'erp', url: 'https://shop.example.com/thanks' },
    products: Array.from({ length: 4 }, (_, p) => ({ id: 'SKU-' + p, name: 'Product ' + p + ' ' + (body.note ?? ''), price_base: 30, price: 30, quantity: 1, category: 'Bulk', tax_included: true, tax_percent: 19 })),
    user: { id: 'cust-' + i, email: 'buyer-' + i + '@example.com' },
    consent: { analytics: true, marketing: true, personalization: true },
  })),
  records: [{ type: 'batch', data: { orders: body.orders } }],
  messages: ['orders: ' + body.orders],
  recordsProcessed: body.orders,
});
`;
const SCHEMA = {
  type: 'object', additionalProperties: false, required: ['orders'],
  properties: { orders: { type: 'integer', minimum: 1, maximum: 1000 }, note: { type: 'string', maxLength: 2000 } },
};

describe('custom endpoints: the env=test answer is bounded', function () {
  this.timeout(60_000);
  let root: string;
  let s: TestApp;
  let a: TestAccount;
  before(async () => {
    root = customersRoot();
    writeEndpoint(root, 'acme', 'checkouts', { handler: CHECKOUTS, schema: SCHEMA, example: { orders: 1 } });
    s = await startTestApp({ CUSTOMERS_DIR: root });
    a = await s.account({ tier: 'CUSTOM', host: 'https://shop.example.com', country: 'RO' });
    await s.accounts.update(a.scriptId, { customer: 'acme' });
    for (const type of ['ga4', 'meta-capi', 'tiktok', 'webhook']) {
      await s.running.store.destinations.add({
        id: `dst_${randomBytes(8).toString('hex')}`, scriptId: a.scriptId, type, name: type, enabled: true, settings: SETTINGS[type]('https://example.com'),
      });
    }
  });
  after(async () => {
    await s.close();
    rmSync(root, { recursive: true, force: true });
  });
  const post = (body: unknown) => s.post('/service/custom/checkouts', body, { account: a, query: `id=${a.scriptId}&env=test` });

  it(`1,000 produced events: at most 1 MiB, the first ${TEST_PREVIEW_EVENTS} previewed for every destination, the rest counted`, async () => {
    const r = await post({ orders: 1000, note: 'n'.repeat(300) });
    expect(r.status).to.equal(200);
    expect(Buffer.byteLength(r.text)).to.be.at.most(TEST_RESPONSE_MAX_BYTES);
    const d = r.body.custom_data;
    expect(d).to.include({ env: 'test', records_processed: 1000, validation_status: 'partially_rejected', events_not_previewed: 1000 - TEST_PREVIEW_EVENTS });
    expect(d.events).to.have.length(TEST_PREVIEW_EVENTS);
    expect(d.events.map((e: any) => e.event_id)).to.deep.equal(Array.from({ length: TEST_PREVIEW_EVENTS }, (_, i) => `ORD-${i}`));
    expect(d.events[3]).to.include({ status: 'would_reject' });
    expect(d.events[3].errors.join(' ')).to.include('currency');
    for (const e of d.events.filter((x: any) => x.status === 'would_accept')) {
      expect(e.preview.map((p: any) => [p.type, p.status])).to.have.deep.members([
        ['ga4', 'would_send'], ['meta-capi', 'would_send'], ['tiktok', 'would_send'], ['webhook', 'would_send']]);
    }
    expect(r.body.messages).to.include(`test mode previews the first ${TEST_PREVIEW_EVENTS} events; ${1000 - TEST_PREVIEW_EVENTS} more were validated (rejections are listed above) but not previewed`);
    expect(r.body.messages.at(-1)).to.equal('test mode: nothing was stored or delivered');
  });

  it(`${TEST_PREVIEW_EVENTS} events or fewer are answered as before: every one previewed, no count`, async () => {
    const r = await post({ orders: 5 });
    expect(r.body.custom_data.events).to.have.length(5);
    expect(r.body.custom_data).to.not.have.property('events_not_previewed');
    expect(r.body.custom_data.records).to.deep.equal([{ type: 'batch', data: { orders: 5 } }]);
    expect(r.body.messages.join('\n')).to.not.include('RESPONSE_TRUNCATED');
  });

  it('past the limit, previewed events are elided as endpoint 2 elides its event, then records and messages, with one RESPONSE_TRUNCATED message', () => {
    const big = 'x'.repeat(40_000);
    const event = { name: 'e', status: 'would_accept', errors: [], warnings: ['w'], payload: { big }, data_normalized: { big }, preview: [{ requests: [{ body: { big }, raw_body: JSON.stringify({ big }) }] }] };
    const answer = { result: 'ok' as const, messages: ['m'], custom_data: { env: 'test', events: [event, event], records: [{ type: 't', data: { big } }] } };
    const out = boundTestAnswer(answer, 200_000);
    expect(out.custom_data.events[0].payload).to.match(/^\[elided: the body as received/);
    expect(out.custom_data.events[0].warnings, 'an event keeps its own warnings').to.deep.equal(['w']);
    expect(out.custom_data.records, 'kept: it fits once the events are elided').to.deep.equal([{ type: 't', data: { big } }]);
    expect(out.messages.at(-1)).to.match(/^RESPONSE_TRUNCATED: the answer would have exceeded 200000 bytes/);
    expect(Buffer.byteLength(JSON.stringify(out))).to.be.at.most(200_000);
    expect(answer.custom_data.events[0].payload, 'the input is not changed').to.deep.equal({ big });
    const tight = boundTestAnswer({ ...answer, messages: Array.from({ length: 300 }, (_, i) => `message ${i} ${'y'.repeat(200)}`) }, 60_000);
    expect(tight.custom_data.records).to.match(/^\[elided: 1 records/);
    expect(tight.messages).to.have.length(102);
    expect(tight.messages[100]).to.equal('[elided: 200 more messages]');
    expect(Buffer.byteLength(JSON.stringify(tight))).to.be.at.most(60_000);
    expect(boundTestAnswer({ result: 'ok', messages: [], custom_data: { events: [] } })).to.deep.equal({ result: 'ok', messages: [], custom_data: { events: [] } });
  });
});
