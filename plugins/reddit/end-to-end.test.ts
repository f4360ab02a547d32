// Reddit end to end through the running service: an account connects a reddit destination
// (the `endpoint` override pointing at a loopback double). Endpoint 2's preview shows the
// exact request with the token masked; a checkout through endpoint 1 then reaches the
// double as Reddit's native request — the default rules from this folder, the e-mail in
// Reddit's canonical hash, the click id and conversion_id — and is recorded delivered.
import { expect } from 'chai';
import { INTAKE_PATHS, startTestServer, waitFor, type TestServer, startDestinationDouble, type DestinationDouble } from 'tracklane/sdk/testing';

const EMAIL_HASH = 'ff8d9819fc0e12bf0d24892e45987e249a28dce836a85cad60e28eaaa8c6d976'; // alice@example.com, Reddit's example

describe('reddit end to end', () => {
  let s: TestServer;
  let reddit: DestinationDouble;
  before(async () => {
    s = await startTestServer({ ALLOW_PRIVATE_DESTINATIONS: '1' });
    reddit = await startDestinationDouble();
    reddit.otherwise({ status: 200, body: { data: { message: 'Successfully processed 1 conversion events.' } } });
  });
  after(async () => {
    await s.close();
    await reddit.close();
  });

  it('endpoint 2 previews the Reddit request; endpoint 1 delivers it to the double', async () => {
    const shop = await s.account({ country: 'US' });
    await s.running.store.destinations.add({
      id: 'dst_0000000000rdt001', scriptId: shop.scriptId, type: 'reddit', name: 'reddit ads', enabled: true,
      settings: { pixel_id: 'a2_gp7k2m9xq1', access_token: 'rdt_SECRET_TOKEN', endpoint: reddit.url },
    });
    const payload = {
      event: { name: 'checkout_completed', id: 'ORD-RDT-1', value: 59.9, currency: 'USD' },
      context: { environment: 'prod', data_source: 'website', url: 'https://shop.example/thanks?rdt_cid=3184742045291813272', user_agent: 'Mozilla/5.0', overide_ip: '203.0.113.9' },
      products: [{ id: 'SKU-9', name: 'Lamp', price_base: 59.9, price: 59.9, quantity: 1, tax_percent: 19, category: 'Home' }],
      user: { email: 'Al.ice$+Apple@Example.Com' },
      consent: { analytics: true, personalization: true, marketing: true },
    };

    const test = await s.post(INTAKE_PATHS.test, payload, { account: shop });
    expect(test.status, test.text).to.equal(200);
    const entry = test.body.preview.find((p: { destination_id: string }) => p.destination_id === 'dst_0000000000rdt001');
    expect(entry, JSON.stringify(test.body.preview)).to.not.equal(undefined);
    const [previewed] = entry.requests;
    expect(previewed.url).to.equal(`${reddit.url}/api/v3/pixels/a2_gp7k2m9xq1/conversion_events`);
    expect(JSON.stringify(previewed)).to.not.include('rdt_SECRET_TOKEN');
    const [shown] = previewed.body.data.events;
    expect(shown).to.deep.include({ action_source: 'WEBSITE', click_id: '3184742045291813272', type: { tracking_type: 'PURCHASE' } });
    expect(shown.user.email).to.equal(EMAIL_HASH);
    expect(reddit.requests, 'the preview sends nothing').to.have.length(0);

    const r = await s.post('/webhooks/service/event', payload, { account: shop });
    expect(r.status).to.equal(200);
    await reddit.waitFor(() => reddit.requests.length === 1, 10_000, 'the Reddit request');
    const [req] = reddit.requests;
    expect(req.path).to.equal('/api/v3/pixels/a2_gp7k2m9xq1/conversion_events');
    expect(req.headers.authorization).to.equal('Bearer rdt_SECRET_TOKEN');
    const [ev] = req.json<{ data: { events: Record<string, any>[] } }>().data.events;
    expect(ev).to.deep.include({ action_source: 'WEBSITE', click_id: '3184742045291813272', type: { tracking_type: 'PURCHASE' } });
    expect(ev.metadata).to.deep.equal({
      value: 59.9, currency: 'USD', item_count: 1, products: [{ id: 'SKU-9', name: 'Lamp', category: 'Home', quantity: 1, item_price: 59.9 }], conversion_id: 'ORD-RDT-1',
    });
    expect(ev.user.email).to.equal(EMAIL_HASH);
    expect({ ...shown, event_at: 0 }, 'the preview is the request sent').to.deep.equal({ ...ev, event_at: 0 });
    const delivered = async () => (await s.running.store.deliveries.list({ destinationId: 'dst_0000000000rdt001' }))[0]?.status === 'delivered';
    expect(await waitFor(delivered, 5_000), 'the delivery recorded as delivered').to.equal(true);
  });
});
