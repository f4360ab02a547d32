// Endpoint 2's per-destination preview: exact native requests with secrets masked, skip
// reasons (consent, dev, allow-list), marketer warnings, the funnel check, and a rule
// edit showing up without a restart.
import { expect } from 'chai';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApp, tempDir, waitFor, type TestApp, type TestAccount } from '../helpers/test-app.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { createDestinationService } from '../../src/destinations/destination-service.ts';
import { shippedFolders } from '../helpers/shipped-folders.ts';

export const CONFIGS = {
  ga4: { measurement_id: 'G-TEST123', api_secret: 'ga4-secret-value' },
  'google-ads': { customer_id: '123-456-7890', developer_token: 'dev-token-value', access_token: 'ads-token-value', conversion_actions: { checkout_completed: '111', lead_created: '222' } },
  'meta-capi': { pixel_id: '987654321', access_token: 'meta-token-value' },
  tiktok: { pixel_code: 'CTEST123', access_token: 'tiktok-token-value' },
  webhook: { url: 'https://hooks.example.com/tracklane', secret: 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=' },
} as const;
const SECRETS = ['ga4-secret-value', 'dev-token-value', 'ads-token-value', 'meta-token-value', 'tiktok-token-value', 'AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA='];

const checkout = {
  event: { name: 'checkout_completed', id: 'ORD-PREVIEW-1', value: 120, currency: 'EUR' },
  context: { environment: 'prod', data_source: 'website', url: 'https://shop.example/thanks?gclid=TeSt_GcLiD', user_agent: 'Mozilla/5.0', overide_ip: '203.0.113.7' },
  products: [{ id: 'SKU-1', name: 'Shoe', category: 'Shoes', price_base: 120, price: 110, tax_percent: 19 }],
  shipping: [{ name: 'Courier', value: 10 }],
  user: { email: 'Jane.Doe@Example.com', phone: '0722 123 456', country: 'Romania' },
  consent: { analytics: true, personalization: true, marketing: true },
  cookies: [{ name: '_ga', value: 'GA1.1.1234567890.1700000000' }, { name: '_fbp', value: 'fb.1.1700000000000.42' }],
};

describe('endpoint 2 preview', () => {
  let s: TestApp;
  let a: TestAccount;
  let rulesDir: string;
  const ids: Record<string, string> = {};

  before(async () => {
    rulesDir = tempDir('tl-rules-');
    cpSync(shippedFolders().rulesDir, rulesDir, { recursive: true });
    s = await startTestApp({ RULES_DIR: rulesDir }, { watchRules: true });
    a = await s.account({ country: 'RO', host: 'https://shop.example' });
    const svc = createDestinationService(s.running.store, s.running.plugins);
    for (const [type, config] of Object.entries(CONFIGS)) ids[type] = (await svc.add(a.scriptId, type, config)).id;
  });
  after(() => s.close());

  const preview = async (body: unknown) => {
    const r = await s.post(INTAKE_PATHS.test, body, { account: a });
    expect(r.status).to.equal(200);
    return r.body;
  };

  it('shows every destination\'s native request with secrets masked', async () => {
    const body = await preview(checkout);
    expect(body.errors).to.deep.equal([]);
    const byType = Object.fromEntries(body.preview.map((p: any) => [p.type, p]));
    expect(Object.keys(byType)).to.have.members(Object.keys(CONFIGS));
    for (const p of body.preview) {
      expect(p.status, `${p.type}: ${p.message}`).to.equal('would_send');
      expect(p.destination_id).to.equal(ids[p.type]);
    }
    const text = JSON.stringify(body.preview);
    for (const secret of SECRETS) expect(text).to.not.include(secret);

    const ga4 = byType.ga4.requests[0];
    expect(ga4.method).to.equal('POST');
    expect(ga4.url).to.equal('https://www.google-analytics.com/mp/collect?measurement_id=G-TEST123&api_secret=****');
    expect(ga4.body.client_id).to.equal('1234567890.1700000000');
    expect(ga4.body.events[0].name).to.equal('purchase');
    expect(ga4.body.events[0].params).to.include({ transaction_id: 'ORD-PREVIEW-1', value: 120, currency: 'EUR' });
    expect(ga4.raw_body).to.equal(JSON.stringify(ga4.body));

    const meta = byType['meta-capi'].requests[0];
    expect(meta.url).to.match(/^https:\/\/graph\.facebook\.com\/v[\d.]+\/987654321\/events/);
    const ev = meta.body.data[0];
    expect(ev).to.include({ event_name: 'Purchase', event_id: 'ORD-PREVIEW-1', action_source: 'website' });
    // SHA-256 of 'jane.doe@example.com', '40722123456' (E.164 digits, national RO number) and 'ro', computed independently
    expect(ev.user_data.em).to.equal('86e0b9e56c17cc4d12387e1949b85053fbe73bc3ce5a1188713a9d300cc6133d');
    expect(ev.user_data.ph).to.equal('8ef20d6edc1f705a87117f841de7596bbfa47c0caf407fd86c040e8338bbd340');
    expect(ev.user_data.country).to.equal('7ef9ec0cf2c4facafddd03ab96eca0939d6749b49952bd816f1e0cc6901941d5');
    expect(ev.user_data.fbp).to.equal('fb.1.1700000000000.42');

    const ads = byType['google-ads'].requests[0];
    expect(ads.url).to.match(/^https:\/\/googleads\.googleapis\.com\/v\d+\/customers\/1234567890:uploadClickConversions$/);
    expect(ads.headers.authorization ?? ads.headers.Authorization).to.match(/\*\*\*\*/);
    expect(ads.body.partialFailure).to.equal(true);
    expect(ads.body.conversions[0]).to.include({ gclid: 'TeSt_GcLiD', orderId: 'ORD-PREVIEW-1', conversionAction: 'customers/1234567890/conversionActions/111' });

    const tiktok = byType.tiktok.requests[0];
    expect(tiktok.url).to.equal('https://business-api.tiktok.com/open_api/v1.3/event/track/');
    expect(tiktok.body.data[0]).to.include({ event: 'Purchase', event_id: 'ORD-PREVIEW-1' });

    const hook = byType.webhook.requests[0];
    expect(hook.url).to.equal('https://hooks.example.com/tracklane');
    expect(hook.headers['webhook-id']).to.match(/^msg_[0-9a-f]{32}$/);
    expect(hook.body.id).to.equal('ORD-PREVIEW-1');
    expect(hook.body.data.event.id).to.equal('ORD-PREVIEW-1');
    expect(hook.headers['webhook-signature'], 'no valid signature is ever handed out').to.equal('****');
    expect(hook.body.data.user, 'identifiers hashed').to.not.have.property('email');
  });

  it('masks where secrets go, never by searching: a one-character api_secret leaves event text alone', async () => {
    const other = await s.account({ country: 'RO', host: 'https://shop.example' });
    await createDestinationService(s.running.store, s.running.plugins).add(other.scriptId, 'ga4', { measurement_id: 'G-TEST123', api_secret: 'x' });
    const ua = 'Mozilla/5.0 (X11; Linux x86_64)';
    const r = await s.post(INTAKE_PATHS.test, { ...checkout, context: { ...checkout.context, user_agent: ua } }, { account: other });
    const [ga4] = r.body.preview[0].requests;
    expect(ga4.url).to.equal('https://www.google-analytics.com/mp/collect?measurement_id=G-TEST123&api_secret=****');
    expect(ga4.raw_body).to.contain('Linux x86_64');
    expect(ga4.raw_body).to.not.contain('****');
  });

  it('skips analytics without analytics consent and advertising without marketing consent, with reasons', async () => {
    const body = await preview({ ...checkout, consent: { analytics: false, personalization: true, marketing: false } });
    const byType = Object.fromEntries(body.preview.map((p: any) => [p.type, p]));
    expect(byType.ga4).to.include({ status: 'skipped', reason: 'consent' });
    for (const t of ['google-ads', 'meta-capi', 'tiktok']) expect(byType[t]).to.include({ status: 'skipped', reason: 'consent' });
    expect(byType.webhook.status).to.equal('would_send');
  });

  it('sends nothing for the dev environment', async () => {
    const body = await preview({ ...checkout, context: { ...checkout.context, environment: 'dev' } });
    for (const p of body.preview) expect(p).to.include({ status: 'skipped', reason: 'dev_environment' });
  });

  it('warns a marketer when Meta has no match keys and GA4 has no _ga cookie', async () => {
    const body = await preview({ ...checkout, user: { id: 'U-77' }, cookies: [] });
    expect(body.level).to.equal(1);
    expect(body.warnings.some((w: string) => w.startsWith('meta-capi: no match keys'))).to.equal(true);
    expect(body.warnings.some((w: string) => w.startsWith('ga4:') && /client_id/.test(w))).to.equal(true);
  });

  it('honours a destination\'s events allow-list', async () => {
    const svc = createDestinationService(s.running.store, s.running.plugins);
    await svc.update(a.scriptId, ids.tiktok, { settings: { ...CONFIGS.tiktok, events: ['lead_created'] } });
    const ok = await waitFor(async () => {
      const body = await preview(checkout);
      return body.preview.find((p: any) => p.type === 'tiktok').reason === 'not_allow_listed';
    }, 2000);
    expect(ok).to.equal(true);
    await svc.update(a.scriptId, ids.tiktok, { settings: CONFIGS.tiktok });
  });

  it('warns when a cart_viewed product id was never seen in product_viewed or product_added_to_cart', async () => {
    const viewed = {
      event: { name: 'product_viewed', value: 10, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'website' },
      products: [{ id: 'SEEN-1', name: 'Seen', category: 'C', price_base: 10, price: 10, tax_percent: 19 }],
    };
    expect((await s.post(INTAKE_PATHS.event, viewed, { account: a })).status).to.equal(200);
    const cart = {
      event: { name: 'cart_viewed', value: 30, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'website', url: 'https://shop.example/cart' },
      products: [
        { id: 'SEEN-1', name: 'Seen', price_base: 10, price: 10, tax_percent: 19 },
        { id: 'NEVER-1', name: 'Never', price_base: 20, price: 20, tax_percent: 19 },
      ],
    };
    const body = await preview(cart);
    const funnel = body.warnings.filter((w: string) => w.includes('was never sent'));
    expect(funnel).to.have.length(1);
    expect(funnel[0]).to.match(/^UNKNOWN_VALUE: products\[1\]\.id: product id "NEVER-1"/);
  });

  it('uses an edited rule file within 2 s, and keeps the last good rules when an edit is invalid', async () => {
    // The operator's file over the plugin's own defaults, started from a copy of them.
    const file = join(rulesDir, 'ga4.json');
    const original = readFileSync(join(shippedFolders().pluginsDir, 'ga4/rules.json'), 'utf8');
    const eventName = async () => (await preview(checkout)).preview.find((p: any) => p.type === 'ga4').requests[0]?.body.events[0].name;
    expect(await eventName()).to.equal('purchase');
    writeFileSync(file, original.replace('"name": "purchase"', '"name": "purchase_v2"'));
    expect(await waitFor(async () => (await eventName()) === 'purchase_v2', 2000)).to.equal(true);
    writeFileSync(file, '{"destination": "ga4", "rules": [ broken');
    await waitFor(() => s.running.rules.errors().length > 0, 2000);
    expect(s.running.rules.errors().length).to.be.greaterThan(0);
    expect(await eventName()).to.equal('purchase_v2');
    writeFileSync(file, original);
    expect(await waitFor(async () => (await eventName()) === 'purchase', 2000)).to.equal(true);
  });
});
