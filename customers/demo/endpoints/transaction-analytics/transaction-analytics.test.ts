// demo/transaction-analytics over real HTTP: HMAC-signed batches; every transaction a keyed
// record (a re-sent batch replaces, never doubles); approved sales become payment_confirmed,
// never checkout_completed, so the shop's own richer purchase is the one conversion whichever
// arrives first; the summary per currency; refusals naming their field.
import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { INTAKE_PATHS, startDestinationDouble, startEndpointHarness, waitFor, type EndpointHarness } from 'tracklane/sdk/testing';

const DIR = fileURLToPath(new URL('.', import.meta.url));
const SECRET = 'demo-only-hmac-secret-transaction-analytics-51d0';

/** Signs exactly the bytes sent: `<unix seconds>.<raw body>`. */
function signed(body: unknown, ts = Math.floor(Date.now() / 1000)): { raw: string; headers: Record<string, string> } {
  const raw = JSON.stringify(body);
  const sig = createHmac('sha256', SECRET).update(`${ts}.${raw}`).digest('hex');
  return { raw, headers: { 'x-signature': sig, 'x-signature-timestamp': String(ts) } };
}

describe('demo/transaction-analytics', () => {
  let h: EndpointHarness;
  before(async () => {
    h = await startEndpointHarness(DIR, { approveEvents: ['payment_confirmed'], env: { ALLOW_PRIVATE_DESTINATIONS: '1' } });
  });
  after(() => h.close());

  const post = (body: unknown, env?: string, ts?: number) => {
    const { raw, headers } = signed(body, ts);
    return h.post(null, { env, raw, headers });
  };
  const example = () => structuredClone(h.example);

  const SUMMARY = [
    '3 transactions: 2 approved, 1 declined, 0 pending',
    'EUR: sales 144.80, refunds and chargebacks 20.00, fees 2.17, net 122.63',
    '1 approved sale sent as payment_confirmed',
  ];

  it('env=test: example.json → three transaction records, one payment_confirmed, a summary per currency; nothing stored', async () => {
    const r = await post(h.example, 'test');
    expect(r.status, r.text).to.equal(200);
    expect(r.body.messages).to.deep.equal([...SUMMARY, 'test mode: nothing was stored or delivered']);
    const d = r.body.custom_data;
    expect(d).to.include({ records_processed: 3, env: 'test' });
    // The payment confirmation carries no consent: accepted with a warning.
    expect(d.validation_status).to.equal('valid_with_warnings');
    expect(d.events.map((e: any) => [e.name, e.event_id, e.status])).to.deep.equal([['payment_confirmed', 'TX-7781001', 'would_accept']]);
    expect(d.events[0].payload.event.properties).to.deep.equal({ order_id: 'ORD-10001' });
    expect(d.events[0].payload.payments).to.deep.equal([{ type: 'card', value: 144.8 }]);
    expect(d.records.map((x: any) => [x.type, x.key, x.data.status, x.data.net])).to.deep.equal([
      ['transaction', 'TX-7781001', 'approved', '142.63'],
      ['transaction', 'TX-7781002', 'declined', '89.50'],
      ['transaction', 'TX-7781003', 'approved', '20.00'],
    ]);
    expect(await h.server.running.store.events.list({ scriptId: h.account.scriptId })).to.deep.equal([]);
  });

  it('env=production: records and the event committed; the same batch again replaces records instead of doubling them', async () => {
    const r = await post(h.example, 'production');
    expect(r.status, r.text).to.equal(200);
    expect(r.body.messages).to.deep.equal(SUMMARY);
    expect(r.body.custom_data.records_stored).to.equal(3);
    expect(r.body.custom_data.events).to.deep.equal([{ name: 'payment_confirmed', event_id: 'TX-7781001', status: 'accepted' }]);
    const body = example();
    body.transactions[1].status = 'approved'; // the processor retried the declined one
    const again = await post(body);
    expect(again.status).to.equal(200);
    const rows = await h.server.customRecords({ scriptId: h.account.scriptId, endpoint: 'transaction-analytics' });
    expect(rows.map((x) => [x.key, x.data.status]).sort()).to.deep.equal([
      ['TX-7781001', 'approved'], ['TX-7781002', 'approved'], ['TX-7781003', 'approved'],
    ]);
    expect(again.body.custom_data.events.map((e: any) => [e.event_id, e.status])).to.deep.equal([
      ['TX-7781001', 'duplicate'],
      ['TX-7781002', 'accepted'],
    ]);
  });

  it('the shop\'s own checkout_completed for the same order is accepted whichever arrives first, with its buyer', async () => {
    const shop = (order: string) => ({
      event: { name: 'checkout_completed', id: order, value: 120.5, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'website', url: 'https://shop.example.com/thanks', user_agent: 'Mozilla/5.0 test' },
      products: [{ id: 'MUG-1', name: 'Mug', price_base: 59.99, price: 49.99, quantity: 2, category: 'Kitchen', tax_included: true, tax_percent: 19 }],
      user: { email: 'buyer@example.com' },
      consent: { analytics: true, marketing: true, personalization: true },
      cookies: [{ name: '_ga', value: 'GA1.1.1234567890.1700000000' }, { name: '_fbp', value: 'fb.1.1700000000000.1234567890' }],
    });
    const batch = (tx: string, order: string) => {
      const b = example();
      b.transactions = [{ ...b.transactions[0], transaction_id: tx, order_id: order }];
      return b;
    };
    // One account sends both: the shop through endpoint 1 (add-on), the processor here.
    const account = await h.makeAccount({ addon: true });
    const processor = (body: unknown) => {
      const { raw, headers } = signed(body);
      return h.post(null, { raw, headers, account });
    };
    // The processor first, then the shop.
    expect((await processor(batch('TX-A', 'ORD-A'))).body.custom_data.events[0]).to.include({ name: 'payment_confirmed', status: 'accepted' });
    expect((await h.server.post(INTAKE_PATHS.event, shop('ORD-A'), { account })).status).to.equal(200);
    // The shop first, then the processor.
    expect((await h.server.post(INTAKE_PATHS.event, shop('ORD-B'), { account })).status).to.equal(200);
    expect((await processor(batch('TX-B', 'ORD-B'))).body.custom_data.events[0]).to.include({ name: 'payment_confirmed', status: 'accepted' });
    for (const order of ['ORD-A', 'ORD-B']) {
      const rows = await h.server.running.store.events.list({ scriptId: account.scriptId, eventId: order });
      expect(rows.map((e) => [e.name, e.status]), order).to.deep.equal([['checkout_completed', 'accepted']]);
      expect((rows[0].payload as { user: { email: string } }).user.email).to.equal('buyer@example.com');
    }
  });

  it('a signed request replayed within the 300 s window is a duplicate: one delivery, records replaced not doubled', async () => {
    const hook = await startDestinationDouble();
    try {
      const account = await h.makeAccount();
      await h.server.addDestination(account.scriptId, 'webhook', { url: `${hook.url}/in`, secret: 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=' });
      const body = example();
      body.transactions = [{ ...body.transactions[0], transaction_id: 'TX-REPLAY', order_id: 'ORD-REPLAY' }];
      const { raw, headers } = signed(body);
      const first = await h.post(null, { raw, headers, account });
      const replay = await h.post(null, { raw, headers, account });
      expect(first.body.custom_data.events[0]).to.include({ event_id: 'TX-REPLAY', status: 'accepted' });
      expect(replay.status).to.equal(200);
      expect(replay.body.custom_data.events[0]).to.include({ event_id: 'TX-REPLAY', status: 'duplicate' });
      await hook.waitFor(() => hook.requests.length >= 1, 10_000, 'the payment reaches the webhook');
      expect(await waitFor(async () => (await h.server.running.store.deliveries.dispatchBacklog()) === 0, 10_000)).to.equal(true);
      // The webhook's answer is recorded a few milliseconds after it is received.
      const list = () => h.server.running.store.deliveries.list({ scriptId: account.scriptId, eventId: 'TX-REPLAY' });
      expect(await waitFor(async () => (await list()).every((r) => r.status !== 'pending'), 10_000), 'the attempt recorded').to.equal(true);
      expect((await list()).map((r) => r.status), 'one delivery for the event, not two').to.deep.equal(['delivered']);
      expect(hook.requests.filter((r) => r.body.includes('TX-REPLAY'))).to.have.length(1);
    } finally {
      await hook.close();
    }
  });

  it('HMAC: refuses an unsigned, stale, or re-signed-elsewhere request', async () => {
    const unsigned = await h.post(h.example, { env: 'test' });
    expect(unsigned.status).to.equal(401);
    expect(unsigned.body.error_context.field).to.equal('X-Signature');
    const stale = await post(h.example, 'test', Math.floor(Date.now() / 1000) - 600);
    expect(stale.status).to.equal(401);
    expect(stale.body.error_context.field).to.equal('X-Signature-Timestamp');
    const { headers } = signed(h.example);
    const tampered = await h.post(null, { env: 'test', headers, raw: JSON.stringify({ ...example(), merchant_id: 'MRC-9999' }) });
    expect(tampered.status).to.equal(401);
    expect(tampered.body.messages).to.deep.equal(['The X-Signature does not match the body and timestamp']);
  });

  const invalid: [string, (b: any) => void, string, string][] = [
    ['no merchant_id', (b) => delete b.merchant_id, 'merchant_id', 'the processor\'s merchant id: 1 to 32 letters, digits, dashes or underscores, such as MRC-0042'],
    ['an empty batch', (b) => { b.transactions = []; }, 'transactions', 'an array of 1 to 1000 items, each an object with transaction_id, kind, status, amount, currency, method, processed_at'],
    ['a zero amount', (b) => { b.transactions[0].amount = 0; }, 'transactions[0].amount', 'a number greater than 0 and of at most 1000000 and in steps of 0.01'],
    ['sub-cent amounts', (b) => { b.transactions[1].amount = 89.505; }, 'transactions[1].amount', 'a number greater than 0 and of at most 1000000 and in steps of 0.01'],
    ['an unknown kind', (b) => { b.transactions[2].kind = 'payout'; }, 'transactions[2].kind', 'one of "sale", "refund", "chargeback"'],
    ['a three-letter country', (b) => { b.transactions[0].country = 'ROU'; }, 'transactions[0].country', 'a two-letter ISO 3166-1 country code in capitals, such as RO'],
    ['no processed_at', (b) => delete b.transactions[1].processed_at, 'transactions[1].processed_at', 'an ISO 8601 date-time with a time zone, such as 2024-05-01T13:45:00Z'],
    ['a transaction id twice', (b) => { b.transactions[2].transaction_id = 'TX-7781001'; }, 'transactions[2].transaction_id', 'a transaction id not used earlier in the same batch'],
    ['a fee above the amount', (b) => { b.transactions[0].fee = 200; }, 'transactions[0].fee', 'a number from 0 to the amount (144.8)'],
  ];
  for (const [what, change, field, expected] of invalid) {
    it(`400 for ${what}: error_context names ${field}`, async () => {
      const body = example();
      change(body);
      const r = await post(body, 'test');
      expect(r.status, r.text).to.equal(400);
      expect(r.body.error_code).to.equal('CUSTOM_VALIDATION_ERROR');
      expect(r.body.error_context).to.deep.equal({ field, expected_format: expected });
    });
  }
});
