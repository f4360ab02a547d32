// Pinterest end to end through the running service: an account connects a pinterest
// destination (the `endpoint` override pointing at a loopback double), a checkout goes in
// through endpoint 1, and the double receives Pinterest's native request — the default
// rules from this folder, e-mail and phone hashed in Pinterest's normal forms, the
// bearer token, and the order's value as a string.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { startTestServer, waitFor, type TestServer, startDestinationDouble, type DestinationDouble } from 'tracklane/sdk/testing';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe('pinterest end to end', () => {
  let s: TestServer;
  let pinterest: DestinationDouble;
  before(async () => {
    s = await startTestServer({ ALLOW_PRIVATE_DESTINATIONS: '1' });
    pinterest = await startDestinationDouble();
    pinterest.otherwise({ status: 200, body: { num_events_received: 1, num_events_processed: 1, events: [{ status: 'processed' }] } });
  });
  after(async () => {
    await s.close();
    await pinterest.close();
  });

  it('a checkout through endpoint 1 reaches the Pinterest double as a checkout event with hashed identifiers', async () => {
    const shop = await s.account({ country: 'RO' });
    await s.running.store.destinations.add({
      id: 'dst_0000000000pin001', scriptId: shop.scriptId, type: 'pinterest', name: 'pins', enabled: true,
      settings: { ad_account_id: '549755885175', access_token: 'pina_TOKEN', endpoint: pinterest.url },
    });
    const r = await s.post('/webhooks/service/event', {
      event: { name: 'checkout_completed', id: 'ORD-PIN-1', value: 59.9, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'website', url: 'https://shop.example/thanks?epik=dj0yJnU9abc', user_agent: 'Mozilla/5.0', overide_ip: '203.0.113.9' },
      products: [{ id: 'SKU-9', name: 'Lamp', price_base: 59.9, price: 59.9, quantity: 1, tax_percent: 19, category: 'Home' }],
      user: { email: ' Jane.Doe@Example.com ', phone: '+40 722 123 456' },
      consent: { analytics: true, personalization: true, marketing: true },
    }, { account: shop });
    expect(r.status).to.equal(200);
    await pinterest.waitFor(() => pinterest.requests.length === 1, 10_000, 'the Pinterest request');
    const [req] = pinterest.requests;
    expect(req.path).to.equal('/v5/ad_accounts/549755885175/events');
    expect(req.headers.authorization).to.equal('Bearer pina_TOKEN');
    const [ev] = req.json<{ data: Record<string, any>[] }>().data;
    expect(ev).to.include({ event_name: 'checkout', event_id: 'ORD-PIN-1', action_source: 'web' });
    expect(ev.user_data.em).to.deep.equal([sha256('jane.doe@example.com')]);
    expect(ev.user_data.ph).to.deep.equal([sha256('40722123456')]);
    expect(ev.custom_data).to.include({ currency: 'EUR', value: '59.9', order_id: 'ORD-PIN-1' });
    const delivered = async () => (await s.running.store.deliveries.list({ destinationId: 'dst_0000000000pin001' }))[0]?.status === 'delivered';
    expect(await waitFor(delivered, 5_000), 'the delivery recorded as delivered').to.equal(true);
  });
});
