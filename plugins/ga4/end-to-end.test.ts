// GA4 end to end through the running service: an account connects a ga4 destination (the
// `endpoint` override pointing at a loopback double); endpoint 2's preview shows the exact
// Measurement Protocol request with the API secret masked — page_location, page_referrer,
// user properties, consent and the event's time included — and a checkout through endpoint 1
// reaches the double with the same fields and is recorded as delivered. The server loads
// this folder alone (a plugins and a rules directory of its own), so sibling plugins being
// written do not change what it sees.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { INTAKE_PATHS, startDestinationDouble, type DestinationDouble, startTestServer, tempDir, waitFor, type TestAccount, type TestServer } from 'tracklane/sdk/testing';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const DESTINATION = 'dst_0000000000ga4e2e';

describe('ga4 end to end', () => {
  let s: TestServer;
  let ga: DestinationDouble;
  let shop: TestAccount;
  before(async () => {
    const plugins = tempDir('tl-ga4-plugins-');
    symlinkSync(fileURLToPath(new URL('.', import.meta.url)), join(plugins, 'ga4'), 'dir');
    s = await startTestServer({ ALLOW_PRIVATE_DESTINATIONS: '1', PLUGINS_DIR: plugins, RULES_DIR: tempDir('tl-ga4-rules-') });
    ga = await startDestinationDouble();
    ga.otherwise({ status: 204 });
    shop = await s.account({ country: 'RO', host: 'https://shop.example' });
    await s.running.store.destinations.add({
      id: DESTINATION, scriptId: shop.scriptId, type: 'ga4', name: 'analytics', enabled: true,
      settings: { measurement_id: 'G-E2E12345', api_secret: 'GA4_SECRET_VALUE', endpoint: ga.url },
    });
  });
  after(async () => {
    await s.close();
    await ga.close();
  });

  const checkout = (id: string, consent = { analytics: true, personalization: true, marketing: true }) => ({
    event: { name: 'checkout_completed', id, value: 59.9, currency: 'EUR' },
    context: {
      environment: 'prod', data_source: 'website', url: 'https://shop.example/thanks', referrer_url: 'https://www.google.com/',
      user_agent: 'Mozilla/5.0', overide_ip: '203.0.113.9',
    },
    products: [{ id: 'SKU-9', name: 'Lamp', price_base: 59.9, price: 59.9, quantity: 1, tax_percent: 19, category: 'Home' }],
    user: { id: 'cust-7', email: ' Jane.Doe@Example.com ', orders_total_number: 2, orders_total_value: 120.5 },
    cookies: [{ name: '_ga', value: 'GA1.1.1234567890.1700000000' }],
    consent,
  });

  it('endpoint 2 previews the exact request: page_location, page_referrer, user properties, consent and time, the secret masked', async () => {
    const before = Date.now();
    const r = await s.post(INTAKE_PATHS.test, checkout('ORD-GA-PREVIEW'), { account: shop });
    expect(r.status).to.equal(200);
    const [entry] = r.body.preview;
    expect(entry).to.include({ type: 'ga4', status: 'would_send', destination_id: DESTINATION });
    const [req] = entry.requests;
    expect(req.url).to.equal(`${ga.url}/mp/collect?measurement_id=G-E2E12345&api_secret=****`);
    expect(req.headers).to.deep.equal({ 'content-type': 'application/json' });
    const micros = req.body.timestamp_micros;
    expect(micros).to.be.a('number').within(before * 1000, Date.now() * 1000);
    expect(req.body).to.deep.equal({
      client_id: '1234567890.1700000000',
      user_id: 'cust-7',
      timestamp_micros: micros,
      user_properties: { orders_total_number: { value: 2 }, orders_total_value: { value: 120.5 } },
      user_data: { sha256_email_address: [sha256('jane.doe@example.com')] },
      consent: { ad_user_data: 'GRANTED', ad_personalization: 'GRANTED' },
      ip_override: '203.0.113.9',
      user_agent: 'Mozilla/5.0',
      events: [{
        name: 'purchase',
        params: {
          transaction_id: 'ORD-GA-PREVIEW', value: 59.9, currency: 'EUR',
          items: [{ item_id: 'SKU-9', item_name: 'Lamp', item_category: 'Home', price: 59.9, quantity: 1 }],
          page_location: 'https://shop.example/thanks', page_referrer: 'https://www.google.com/',
        },
      }],
    });
    expect(JSON.stringify(r.body)).to.not.include('GA4_SECRET_VALUE');

    const denied = (await s.post(INTAKE_PATHS.test, checkout('ORD-GA-DENIED', { analytics: true, personalization: true, marketing: false }), { account: shop }))
      .body.preview[0].requests[0].body;
    expect(denied.consent).to.deep.equal({ ad_user_data: 'DENIED', ad_personalization: 'DENIED' });
    expect(denied).to.not.have.property('user_data');
    expect(ga.requests).to.have.length(0);
  });

  it('a checkout through endpoint 1 reaches the GA4 double with the page fields and is delivered', async () => {
    const r = await s.post(INTAKE_PATHS.event, checkout('ORD-GA-1'), { account: shop });
    expect(r.status).to.equal(200);
    await ga.waitFor(() => ga.requests.length === 1, 10_000, 'the GA4 request');
    const [req] = ga.requests;
    expect(req.path).to.equal('/mp/collect?measurement_id=G-E2E12345&api_secret=GA4_SECRET_VALUE');
    const body = req.json<Record<string, any>>();
    expect(body.consent).to.deep.equal({ ad_user_data: 'GRANTED', ad_personalization: 'GRANTED' });
    expect(body.user_properties).to.deep.equal({ orders_total_number: { value: 2 }, orders_total_value: { value: 120.5 } });
    expect(body.events[0].params).to.include({
      transaction_id: 'ORD-GA-1', page_location: 'https://shop.example/thanks', page_referrer: 'https://www.google.com/',
    });
    expect(String(body.timestamp_micros)).to.match(/^\d{16}$/);
    const delivered = async () => (await s.running.store.deliveries.list({ destinationId: DESTINATION }))[0]?.status === 'delivered';
    expect(await waitFor(delivered, 5_000), 'the delivery recorded as delivered').to.equal(true);
  });

  it('a lead carrying personal data in every shape reaches the double with none of it: userinfo, encoded e-mail, names, a phone, lead_source, user agent', async () => {
    const seen = ga.requests.length;
    const r = await s.post(INTAKE_PATHS.event, {
      event: { name: 'lead_created', id: 'LEAD-GA-PII', properties: { lead_source: 'jane.doe@example.com' } },
      context: {
        environment: 'prod', data_source: 'website',
        url: 'https://jane.doe%40example.com:x@shop.example/thanks?ref=jane.doe%2540example.com&name=Jane+Doe&friend=%2B40%20744%20555%20666&plan=pro',
        referrer_url: 'https://mail.example.net/open?to=Jane%20Doe',
        user_agent: 'Mozilla/5.0 (compatible; LeadBot/1.0; +mailto:jane.doe@example.com)',
      },
      user: { id: 'cust-8', email: 'jane.doe@example.com', first_name: 'Jane', last_name: 'Doe' },
      cookies: [{ name: '_ga', value: 'GA1.1.1234567890.1700000000' }],
      consent: { analytics: true, personalization: false, marketing: false },
    }, { account: shop });
    expect(r.status).to.equal(200);
    await ga.waitFor(() => ga.requests.length === seen + 1, 10_000, 'the GA4 request');
    const body = ga.requests[seen].json<Record<string, any>>();
    expect(body).to.deep.equal({
      client_id: '1234567890.1700000000',
      user_id: 'cust-8',
      timestamp_micros: body.timestamp_micros,
      consent: { ad_user_data: 'DENIED', ad_personalization: 'DENIED' },
      events: [{
        name: 'generate_lead',
        params: {
          page_location: 'https://shop.example/thanks?ref=(redacted)&name=(redacted)&friend=(redacted)&plan=pro',
          page_referrer: 'https://mail.example.net/open?to=(redacted)',
        },
      }],
    });
  });
});
