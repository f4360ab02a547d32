// Microsoft Advertising end to end through the running service: an account connects a
// microsoft-ads destination (the `endpoint` override pointing at a loopback double);
// endpoint 2's preview shows the exact Conversions API request with the token masked, and a
// checkout through endpoint 1 reaches the double as Microsoft's native request (the UET
// token as a bearer token, e-mail and phone hashed in Microsoft's forms, msclkid as a UUID)
// and is recorded as delivered. The server loads this folder alone (a plugins and a rules
// directory of its own), so sibling plugins being written do not change what it sees.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { INTAKE_PATHS, startDestinationDouble, type DestinationDouble, startTestServer, tempDir, waitFor, type TestAccount, type TestServer } from 'tracklane/sdk/testing';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const consent = { analytics: true, personalization: true, marketing: true };
const DESTINATION = 'dst_00000000000ms001';

describe('microsoft-ads end to end', () => {
  let s: TestServer;
  let microsoft: DestinationDouble;
  let shop: TestAccount;
  before(async () => {
    const plugins = tempDir('tl-ms-plugins-');
    symlinkSync(fileURLToPath(new URL('.', import.meta.url)), join(plugins, 'microsoft-ads'), 'dir');
    s = await startTestServer({ ALLOW_PRIVATE_DESTINATIONS: '1', PLUGINS_DIR: plugins, RULES_DIR: tempDir('tl-ms-rules-') });
    microsoft = await startDestinationDouble();
    microsoft.otherwise({ status: 200, body: { eventsReceived: 1 } });
    shop = await s.account({ country: 'RO', host: 'https://shop.example' });
    await s.running.store.destinations.add({
      id: DESTINATION, scriptId: shop.scriptId, type: 'microsoft-ads', name: 'microsoft ads', enabled: true,
      settings: { tag_id: '97247724', access_token: 'UET_SECRET_TOKEN', endpoint: microsoft.url },
    });
  });
  after(async () => {
    await s.close();
    await microsoft.close();
  });

  const checkout = (id: string) => ({
    event: { name: 'checkout_completed', id, value: 59.9, currency: 'EUR' },
    context: { environment: 'prod', data_source: 'website', url: 'https://shop.example/thanks', landing_url: 'https://shop.example/?msclkid=dd4afcccb1c94a4cad9544dd7e5006ab', user_agent: 'Mozilla/5.0', overide_ip: '203.0.113.9' },
    products: [{ id: 'SKU-9', name: 'Lamp', price_base: 59.9, price: 59.9, quantity: 1, tax_percent: 19, category: 'Home' }],
    user: { email: ' Jane.Doe+news@Example.com ', phone: '0722 123 456' },
    cookies: [{ name: '_uetvid', value: 'fe910b70374111f185174b19733c8403' }],
    consent,
  });

  it('endpoint 2 previews the exact request with the token masked; an order_canceled has no rule', async () => {
    const r = await s.post(INTAKE_PATHS.test, checkout('ORD-MS-PREVIEW'), { account: shop });
    expect(r.status).to.equal(200);
    const [entry] = r.body.preview;
    expect(entry).to.include({ type: 'microsoft-ads', status: 'would_send', destination_id: DESTINATION });
    const [req] = entry.requests;
    expect(req.url).to.equal(`${microsoft.url}/v1/97247724/events`);
    expect(req.headers).to.deep.equal({ 'content-type': 'application/json', authorization: '****' });
    expect(req.body).to.deep.equal({
      data: [{
        eventType: 'custom', eventId: 'ORD-MS-PREVIEW', eventName: 'purchase', eventTime: req.body.data[0].eventTime,
        eventSourceUrl: 'https://shop.example/thanks', adStorageConsent: 'G',
        userData: {
          clientUserAgent: 'Mozilla/5.0', anonymousId: 'fe910b70374111f185174b19733c8403',
          em: sha256('janedoe@example.com'), ph: sha256('+40722123456'),
          clientIpAddress: '203.0.113.9', msclkid: 'dd4afccc-b1c9-4a4c-ad95-44dd7e5006ab',
        },
        customData: {
          value: 59.9, currency: 'EUR', transactionId: 'ORD-MS-PREVIEW', items: [{ id: 'SKU-9', quantity: 1, price: 59.9, name: 'Lamp' }],
          itemIds: ['SKU-9'], pageType: 'purchase', ecommTotalValue: 59.9,
        },
      }],
      continueOnValidationError: true,
      dataProvider: 'tracklane',
    });
    expect(req.body.data[0].eventTime).to.be.a('number');
    expect(JSON.stringify(r.body)).to.not.include('UET_SECRET_TOKEN');

    const canceled = { event: { name: 'order_canceled', id: 'ORD-MS-PREVIEW' }, context: { environment: 'prod', data_source: 'admin' }, consent };
    const skipped = (await s.post(INTAKE_PATHS.test, canceled, { account: shop })).body.preview[0];
    expect(skipped).to.include({ type: 'microsoft-ads', status: 'skipped', reason: 'no_matching_rule' });
    expect(microsoft.requests).to.have.length(0);
  });

  it('a checkout through endpoint 1 reaches the Microsoft double with the bearer token and hashed identifiers, and is delivered', async () => {
    const r = await s.post(INTAKE_PATHS.event, checkout('ORD-MS-1'), { account: shop });
    expect(r.status).to.equal(200);
    await microsoft.waitFor(() => microsoft.requests.length === 1, 10_000, 'the Microsoft request');
    const [req] = microsoft.requests;
    expect(req.path).to.equal('/v1/97247724/events');
    expect(req.headers.authorization).to.equal('Bearer UET_SECRET_TOKEN');
    const body = req.json<{ data: Record<string, any>[]; dataProvider: string }>();
    expect(body.dataProvider).to.equal('tracklane');
    expect(body.data[0]).to.include({ eventType: 'custom', eventName: 'purchase', eventId: 'ORD-MS-1', adStorageConsent: 'G' });
    expect(body.data[0].userData).to.include({ em: sha256('janedoe@example.com'), ph: sha256('+40722123456'), msclkid: 'dd4afccc-b1c9-4a4c-ad95-44dd7e5006ab' });
    const delivered = async () => (await s.running.store.deliveries.list({ destinationId: DESTINATION }))[0]?.status === 'delivered';
    expect(await waitFor(delivered, 5_000), 'the delivery recorded as delivered').to.equal(true);
  });
});
