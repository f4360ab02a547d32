// Snapchat end to end through the running service: an account connects a snapchat
// destination (the `endpoint` override pointing at a loopback double). Endpoint 2's preview
// shows the exact request with the token masked and sends nothing; a checkout through
// endpoint 1 then reaches the double as Snap's native request — the default rules from this
// folder, e-mail and phone hashed in Snap's normal forms, the click id, the token in the
// query — and is recorded delivered.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { INTAKE_PATHS, startTestServer, waitFor, type TestServer, startDestinationDouble, type DestinationDouble } from 'tracklane/sdk/testing';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const PIXEL = '1ec32188-754e-4be2-8e55-c949a984a39f';

describe('snapchat end to end', () => {
  let s: TestServer;
  let snap: DestinationDouble;
  before(async () => {
    s = await startTestServer({ ALLOW_PRIVATE_DESTINATIONS: '1' });
    snap = await startDestinationDouble();
    snap.otherwise({ status: 200, body: { status: 'VALID', reason: 'Event processed' } });
  });
  after(async () => {
    await s.close();
    await snap.close();
  });

  it('endpoint 2 previews the Snap request with the token masked; endpoint 1 delivers it to the double', async () => {
    const shop = await s.account({ country: 'RO' });
    await s.running.store.destinations.add({
      id: 'dst_000000000snap001', scriptId: shop.scriptId, type: 'snapchat', name: 'snap ads', enabled: true,
      settings: { pixel_id: PIXEL, access_token: 'snap_SECRET_TOKEN', endpoint: snap.url },
    });
    const payload = {
      event: { name: 'checkout_completed', id: 'ORD-SNAP-1', value: 59.9, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'website', url: 'https://shop.example/thanks?ScCid=snap-click-1', user_agent: 'Mozilla/5.0', overide_ip: '203.0.113.9' },
      products: [{ id: 'SKU-9', name: 'Lamp', price_base: 59.9, price: 59.9, quantity: 1, tax_percent: 19, category: 'Home' }],
      user: { email: ' Jane.Doe@Example.com ', phone: '+40 722 123 456' },
      consent: { analytics: true, personalization: true, marketing: true },
    };

    const test = await s.post(INTAKE_PATHS.test, payload, { account: shop });
    expect(test.status, test.text).to.equal(200);
    const entry = test.body.preview.find((p: { destination_id: string }) => p.destination_id === 'dst_000000000snap001');
    expect(entry, JSON.stringify(test.body.preview)).to.include({ type: 'snapchat', status: 'would_send' });
    const [previewed] = entry.requests;
    expect(previewed.url).to.equal(`${snap.url}/v3/${PIXEL}/events?access_token=****`);
    expect(JSON.stringify(test.body)).to.not.include('snap_SECRET_TOKEN');
    const [shown] = previewed.body.data;
    expect(shown).to.deep.include({ event_name: 'PURCHASE', event_id: 'ORD-SNAP-1', action_source: 'WEB' });
    expect(shown.user_data).to.deep.include({ em: [sha256('jane.doe@example.com')], ph: [sha256('40722123456')], sc_click_id: 'snap-click-1' });
    expect(snap.requests, 'the preview sends nothing').to.have.length(0);

    expect((await s.post(INTAKE_PATHS.event, payload, { account: shop })).status).to.equal(200);
    await snap.waitFor(() => snap.requests.length === 1, 10_000, 'the Snap request');
    const [req] = snap.requests;
    expect(req.path).to.equal(`/v3/${PIXEL}/events?access_token=snap_SECRET_TOKEN`);
    const [ev] = req.json<{ data: Record<string, any>[] }>().data;
    expect(ev).to.deep.equal({ ...shown, event_time: ev.event_time });
    expect(ev.custom_data).to.deep.equal({ value: 59.9, currency: 'EUR', content_ids: ['SKU-9'], contents: [{ id: 'SKU-9', quantity: '1', item_price: '59.9' }], num_items: 1, order_id: 'ORD-SNAP-1' });
    const delivered = async () => (await s.running.store.deliveries.list({ destinationId: 'dst_000000000snap001' }))[0]?.status === 'delivered';
    expect(await waitFor(delivered, 5_000), 'the delivery recorded as delivered').to.equal(true);
  });
});
