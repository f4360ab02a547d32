// End to end through the real pipeline: payload → validateEvent → mapEventForDestination with
// the rules in rules/ → the exact TikTok request. Every expected body is written out by hand;
// hashes were computed independently with
// `node -e "console.log(require('crypto').createHash('sha256').update('+40722123456').digest('hex'))"`.
import { expect } from 'chai';
import { SPEC_EVENT_NAMES } from 'tracklane/sdk';
import { expectOneRequest, expectReady, expectSkipped, goldenHarness } from 'tracklane/sdk/testing';
import plugin from './index.ts';

const ACCOUNT = { scriptId: 'AB12CD34', country: 'RO', host: 'https://shop.example' };
const RECEIVED = 1_760_000_000_123; // event_time 1760000000
const SETTINGS = { pixel_code: 'C4ABCDEF123456789XYZ', access_token: 'tt-token' };
const URL_DEFAULT = 'https://business-api.tiktok.com/open_api/v1.3/event/track/';
const HEADERS = { 'content-type': 'application/json', 'access-token': 'tt-token' };

// ---- payloads --------------------------------------------------------------------------
const UA = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';
const consent = { analytics: true, personalization: true, marketing: true };
const cookies = [
  { name: '_fbp', value: 'fb.1.1712345678901.1234567890' },
  { name: '_ttp', value: '2abcTTPcookie01' },
];
const user = { id: 'CUST-881', email: ' Jane.Doe@Example.com ', phone: '+40 722 123 456', first_name: 'Jane', last_name: 'Doe', city: 'Cluj-Napoca', region: 'CJ', postal_code: '400001', country: 'RO' };
const shirt = { id: 'SKU-RED-M', parent_id: 'SKU-RED', name: 'Linen Shirt Red M', parent_name: 'Linen Shirt', price_base: 59.9, price: 49.9, tax_included: true, tax_percent: 19, quantity: 2, category: 'Shirts', brand: 'Acme', type: 'variable', stock_status: true };
const mug = { id: 'SKU-MUG', parent_id: 'SKU-MUG', name: 'Coffee Mug', price_base: 15, price: 15, tax_included: true, tax_percent: 19, quantity: 1, category: 'Kitchen', type: 'simple', stock_status: true };
const web = (url: string) => ({ environment: 'prod', data_source: 'website', user_agent: UA, overide_ip: '2a02:2f0e:1234::1', url, referrer_url: 'https://www.tiktok.com/' });

const PAYLOADS: Record<string, Record<string, unknown>> = {
  checkout_completed: {
    event: { name: 'checkout_completed', value: 134.85, currency: 'EUR', id: 'ORD-10045' },
    context: { ...web('https://shop.example/checkout/thank-you'), landing_url: 'https://shop.example/?ttclid=E.C.P.ttclid123' },
    products: [shirt, mug],
    shipping: [{ name: 'Courier', value: 20.05, tax_included: true, tax_percent: 19 }],
    payments: [{ name: 'Card', value: 134.85, type: 'card' }],
    user, consent, cookies,
  },
  order_canceled: { event: { name: 'order_canceled', id: 'ORD-10045' }, context: { environment: 'prod', data_source: 'admin' }, user, consent },
  lead_created: { event: { name: 'lead_created', id: 'LEAD-2001' }, context: web('https://shop.example/contact'), user, consent, cookies },
  lead_qualified: {
    event: { name: 'lead_qualified', id: 'LEAD-2001', value: 500, currency: 'EUR', properties: { lead_event_source: 'HubSpot', tiktok_lead_id: '7300000000000000001' } },
    context: { environment: 'prod', data_source: 'crm' },
    user, consent,
  },
  lead_closed: {
    event: { name: 'lead_closed', id: 'LEAD-2001', value: 1200, currency: 'EUR', properties: { outcome: 'won' } },
    context: { environment: 'prod', data_source: 'crm' },
    user: { email: 'jane.doe@example.com' }, consent,
  },
  cart_viewed: {
    event: { name: 'cart_viewed', value: 114.8, currency: 'EUR' },
    context: { ...web('https://shop.example/cart'), page_type: 'cart' },
    products: [shirt, mug],
    user, consent, cookies,
  },
  product_viewed: {
    event: { name: 'product_viewed', value: 49.9, currency: 'EUR' },
    context: { environment: 'prod', data_source: 'website', user_agent: UA, overide_ip: '203.0.113.9', url: 'https://shop.example/p/linen-shirt?ttclid=E.C.P.fromAd42' },
    products: [{ ...shirt, quantity: 1 }],
    consent,
  },
  product_added_to_cart: {
    event: { name: 'product_added_to_cart', value: 99.8, currency: 'EUR' },
    context: web('https://shop.example/p/linen-shirt'),
    products: [shirt],
    user, consent, cookies,
  },
  product_removed_from_cart: {
    event: { name: 'product_removed_from_cart', value: 15, currency: 'EUR' },
    context: { environment: 'prod', data_source: 'app', user_agent: 'ShopApp/3.2 (iPhone; iOS 17.5)' },
    products: [mug],
    user: { id: 'CUST-881' }, consent,
  },
};

// ---- expected ------------------------------------------------------------------------------
const H = {
  email: '86e0b9e56c17cc4d12387e1949b85053fbe73bc3ce5a1188713a9d300cc6133d', // jane.doe@example.com
  phone: '93841fe8558bfa0dbc484f476f27af1de186cd33dfb09c4d1215d42f1abbe0f5', // +40722123456
  external_id: '9967dcee56532704d42421d462ff1cf0f6a5dd522730db5d62ae81478fd0473b', // CUST-881
  first_name: '81f8f6dde88365f3928796ec7aa53f72820b06db8664f5fe76a7eb13e24546a2', // jane
  last_name: '799ef92a11af918e3fb741df42934f3b568ed2d93ac1df74f1b8d41a27932a6f', // doe
  zip_code: 'a5bc8dcde81ed9dbad6edf4f14b3b8e1201702eaa27ab7f8cb708ffe7f49ddc9', // 400001
};
// City, state and country go in plain text.
const IDENTIFIED = {
  email: H.email, phone: H.phone, external_id: H.external_id, first_name: H.first_name, last_name: H.last_name,
  city: 'clujnapoca', state: 'cj', zip_code: H.zip_code, country: 'ro',
};
const WEB_USER = { ...IDENTIFIED, ttp: '2abcTTPcookie01', ip: '2a02:2f0e:1234::1', user_agent: UA };
const SHIRT_2 = { content_id: 'SKU-RED-M', content_name: 'Linen Shirt Red M', content_category: 'Shirts', brand: 'Acme', price: 49.9, quantity: 2 };
const MUG_1 = { content_id: 'SKU-MUG', content_name: 'Coffee Mug', content_category: 'Kitchen', price: 15, quantity: 1 };

const EXPECTED: Record<string, Record<string, unknown> | null> = {
  checkout_completed: {
    event: 'Purchase', event_time: 1760000000, event_id: 'ORD-10045',
    user: { ...IDENTIFIED, ttclid: 'E.C.P.ttclid123', ttp: '2abcTTPcookie01', ip: '2a02:2f0e:1234::1', user_agent: UA },
    properties: { contents: [SHIRT_2, MUG_1], content_type: 'product', currency: 'EUR', value: 134.85, order_id: 'ORD-10045' },
    page: { url: 'https://shop.example/checkout/thank-you', referrer: 'https://www.tiktok.com/' },
  },
  order_canceled: null,
  lead_created: {
    event: 'Lead', event_time: 1760000000, event_id: 'LEAD-2001',
    user: WEB_USER,
    page: { url: 'https://shop.example/contact', referrer: 'https://www.tiktok.com/' },
  },
  // Without crm_event_set_id a CRM stage goes to the pixel as a web event, without `lead`.
  lead_qualified: {
    event: 'QualifiedLead', event_time: 1760000000, event_id: 'LEAD-2001',
    user: IDENTIFIED,
    properties: { currency: 'EUR', value: 500 },
    page: { url: 'https://shop.example' }, // no context.url: the account host
  },
  lead_closed: {
    event: 'ConvertedLead', event_time: 1760000000, event_id: 'LEAD-2001',
    user: { email: H.email },
    properties: { currency: 'EUR', value: 1200 },
    page: { url: 'https://shop.example' }, // no context.url: the account host
  },
  cart_viewed: {
    event: 'ViewContent', event_time: 1760000000, event_id: 'tl_cart_1',
    user: WEB_USER,
    properties: { contents: [SHIRT_2, MUG_1], content_type: 'product', currency: 'EUR', value: 114.8, description: 'cart' },
    page: { url: 'https://shop.example/cart', referrer: 'https://www.tiktok.com/' },
  },
  product_viewed: {
    event: 'ViewContent', event_time: 1760000000, event_id: 'tl_view_1',
    user: { ttclid: 'E.C.P.fromAd42', ip: '203.0.113.9', user_agent: UA },
    properties: { contents: [{ ...SHIRT_2, quantity: 1 }], content_type: 'product', currency: 'EUR', value: 49.9 },
    page: { url: 'https://shop.example/p/linen-shirt?ttclid=E.C.P.fromAd42' },
  },
  product_added_to_cart: {
    event: 'AddToCart', event_time: 1760000000, event_id: 'tl_add_1',
    user: WEB_USER,
    properties: { contents: [SHIRT_2], content_type: 'product', currency: 'EUR', value: 99.8 },
    page: { url: 'https://shop.example/p/linen-shirt', referrer: 'https://www.tiktok.com/' },
  },
  product_removed_from_cart: {
    event: 'RemoveFromCart', event_time: 1760000000, event_id: 'tl_remove_1',
    user: { external_id: H.external_id, user_agent: 'ShopApp/3.2 (iPhone; iOS 17.5)' },
    properties: { contents: [MUG_1], content_type: 'product', currency: 'EUR', value: 15 },
    page: { url: 'https://shop.example' }, // no context.url: the account host
  },
};

const EVENT_IDS: Record<string, string> = {
  cart_viewed: 'tl_cart_1', product_viewed: 'tl_view_1', product_added_to_cart: 'tl_add_1', product_removed_from_cart: 'tl_remove_1',
};

const { run } = goldenHarness({
  plugin, destination: { id: 'dst_tt', name: 'TikTok' }, account: ACCOUNT, settings: SETTINGS, receivedAt: RECEIVED, now: RECEIVED + 2_000,
});

const web1 = (event: Record<string, unknown>) => ({ event_source: 'web', event_source_id: 'C4ABCDEF123456789XYZ', data: [event] });

describe('tiktok golden: payload → validateEvent → rules → request', () => {
  for (const name of SPEC_EVENT_NAMES) {
    const expected = EXPECTED[name];
    it(`${name} → ${expected === null ? 'nothing (no rule)' : String(expected.event)}`, () => {
      const payload = PAYLOADS[name];
      const result = run(payload, EVENT_IDS[name] ?? String((payload.event as { id: string }).id));
      if (expected === null) return expectSkipped(result, 'no_matching_rule');
      expectOneRequest(result, { url: URL_DEFAULT, headers: HEADERS, eventId: expected.event_id as string, body: web1(expected) });
    });
  }

  it('lead_qualified goes to the CRM event set, with its lead object, when crm_event_set_id is set', () => {
    const [req] = expectReady(run(PAYLOADS.lead_qualified, 'LEAD-2001', { ...SETTINGS, crm_event_set_id: '7234567890123456789', test_event_code: 'TEST31337' }));
    expect(req.body).to.equal(JSON.stringify({
      event_source: 'crm',
      event_source_id: '7234567890123456789',
      test_event_code: 'TEST31337',
      data: [{
        event: 'QualifiedLead', event_time: 1760000000, event_id: 'LEAD-2001',
        user: IDENTIFIED,
        properties: { currency: 'EUR', value: 500 },
        page: { url: 'https://shop.example' },
        lead: { lead_id: '7300000000000000001', lead_event_source: 'HubSpot' },
      }],
    }));
  });

  it('lead_closed with outcome "lost" → LostLead', () => {
    const payload = {
      event: { name: 'lead_closed', id: 'LEAD-3001', properties: { outcome: 'lost' } },
      context: { environment: 'prod', data_source: 'crm' },
      user: { email: 'jane.doe@example.com' }, consent,
    };
    const [req] = expectReady(run(payload, 'LEAD-3001'));
    expect(req.body).to.equal(JSON.stringify(web1({
      event: 'LostLead', event_time: 1760000000, event_id: 'LEAD-3001', user: { email: H.email }, page: { url: 'https://shop.example' },
    })));
  });

  it('a purchase without marketing consent is not sent', () => {
    expectSkipped(run({ ...PAYLOADS.checkout_completed, consent: { analytics: true, personalization: true, marketing: false } }, 'ORD-10045'), 'consent');
  });
});
