// LinkedIn end to end through the running service: an account connects a linkedin
// destination (the `endpoint` override pointing at a loopback double); endpoint 2's preview
// shows the exact BATCH_CREATE request with the token masked and skips an event without a
// conversion rule, and a checkout through endpoint 1 reaches the double as LinkedIn's native
// request and is recorded as delivered. The server loads this folder alone (a plugins and a
// rules directory of its own), so sibling plugins being written do not change what it sees.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { INTAKE_PATHS, startDestinationDouble, type DestinationDouble, startTestServer, tempDir, waitFor, type TestAccount, type TestServer } from 'tracklane/sdk/testing';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const consent = { analytics: true, personalization: true, marketing: true };
const DESTINATION = 'dst_00000000000li001';

describe('linkedin end to end', () => {
  let s: TestServer;
  let linkedin: DestinationDouble;
  let shop: TestAccount;
  before(async () => {
    const plugins = tempDir('tl-li-plugins-');
    symlinkSync(fileURLToPath(new URL('.', import.meta.url)), join(plugins, 'linkedin'), 'dir');
    s = await startTestServer({ ALLOW_PRIVATE_DESTINATIONS: '1', PLUGINS_DIR: plugins, RULES_DIR: tempDir('tl-li-rules-') });
    linkedin = await startDestinationDouble();
    linkedin.otherwise({ status: 200, body: { elements: [{ status: 201 }] } });
    shop = await s.account({ country: 'RO', host: 'https://shop.example' });
    await s.running.store.destinations.add({
      id: DESTINATION, scriptId: shop.scriptId, type: 'linkedin', name: 'linkedin ads', enabled: true,
      settings: { access_token: 'AQV_SECRET_TOKEN', conversion_rules: { checkout_completed: '104012' }, endpoint: linkedin.url },
    });
  });
  after(async () => {
    await s.close();
    await linkedin.close();
  });

  const checkout = (id: string) => ({
    event: { name: 'checkout_completed', id, value: 59.9, currency: 'EUR' },
    context: { environment: 'prod', data_source: 'website', url: 'https://shop.example/thanks', landing_url: 'https://shop.example/?li_fat_id=df5gf5-gh6t7-ph4j7h-fgf6n1', user_agent: 'Mozilla/5.0', overide_ip: '203.0.113.9' },
    products: [{ id: 'SKU-9', name: 'Lamp', price_base: 59.9, price: 59.9, quantity: 1, tax_percent: 19, category: 'Home' }],
    user: { email: ' Jane.Doe@Example.com ', first_name: 'Jane', last_name: 'Doe', country: 'RO', properties: { company: 'Acme SRL' } },
    consent,
  });

  it('endpoint 2 previews the exact request with the token masked, and skips an event with no conversion rule', async () => {
    const r = await s.post(INTAKE_PATHS.test, checkout('ORD-LI-PREVIEW'), { account: shop });
    expect(r.status).to.equal(200);
    const [entry] = r.body.preview;
    expect(entry).to.include({ type: 'linkedin', status: 'would_send', destination_id: DESTINATION });
    const [req] = entry.requests;
    expect(req.url).to.equal(`${linkedin.url}/rest/conversionEvents`);
    expect(req.headers).to.include({ authorization: '****', 'linkedin-version': '202603', 'x-restli-method': 'BATCH_CREATE', 'x-restli-protocol-version': '2.0.0' });
    expect(req.body.elements[0]).to.deep.include({ conversion: 'urn:lla:llaPartnerConversion:104012', conversionValue: { currencyCode: 'EUR', amount: '59.9' }, eventId: 'ORD-LI-PREVIEW' });
    expect(JSON.stringify(r.body)).to.not.include('AQV_SECRET_TOKEN');

    const lead = { event: { name: 'lead_created', id: 'L-LI-1' }, context: { environment: 'prod', data_source: 'crm' }, user: { email: 'jane.doe@example.com' }, consent };
    const skipped = (await s.post(INTAKE_PATHS.test, lead, { account: shop })).body.preview[0];
    expect(skipped).to.include({ type: 'linkedin', status: 'skipped', reason: 'condition_not_met' });
    expect(linkedin.requests).to.have.length(0);
  });

  it('a checkout through endpoint 1 reaches the LinkedIn double with hashed e-mail, li_fat_id and userInfo, and is delivered', async () => {
    const r = await s.post(INTAKE_PATHS.event, checkout('ORD-LI-1'), { account: shop });
    expect(r.status).to.equal(200);
    await linkedin.waitFor(() => linkedin.requests.length === 1, 10_000, 'the LinkedIn request');
    const [req] = linkedin.requests;
    expect(req.path).to.equal('/rest/conversionEvents');
    expect(req.headers).to.include({ authorization: 'Bearer AQV_SECRET_TOKEN', 'linkedin-version': '202603', 'x-restli-protocol-version': '2.0.0', 'x-restli-method': 'BATCH_CREATE' });
    const [el] = req.json<{ elements: Record<string, any>[] }>().elements;
    expect(el).to.include({ conversion: 'urn:lla:llaPartnerConversion:104012', eventId: 'ORD-LI-1' });
    expect(el.conversionHappenedAt).to.be.a('number');
    expect(el.user).to.deep.equal({
      userIds: [
        { idType: 'SHA256_EMAIL', idValue: sha256('jane.doe@example.com') },
        { idType: 'LINKEDIN_FIRST_PARTY_ADS_TRACKING_UUID', idValue: 'df5gf5-gh6t7-ph4j7h-fgf6n1' },
      ],
      userInfo: { firstName: 'jane', lastName: 'doe', companyName: 'Acme SRL', countryCode: 'RO' },
    });
    const delivered = async () => (await s.running.store.deliveries.list({ destinationId: DESTINATION }))[0]?.status === 'delivered';
    expect(await waitFor(delivered, 5_000), 'the delivery recorded as delivered').to.equal(true);
  });
});
