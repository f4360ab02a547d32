// End to end through the real pipeline: payload → validateEvent → mapEventForDestination with
// this folder's rules.json → the exact Pinterest request, body compared byte for byte. Every
// hash is a literal, computed from the hand-normalised string in its comment with
// `printf %s 'jane.doe@example.com' | sha256sum`.
import { expect } from 'chai';
import { NativeSchemaError } from 'tracklane/sdk';
import { expectOneRequest, expectReady, expectSkipped, goldenHarness } from 'tracklane/sdk/testing';
import plugin from './index.ts';

const ACCOUNT = { scriptId: 'AB12CD34', country: 'RO', host: 'https://shop.example' };
const RECEIVED = 1_760_000_000_123; // event_time 1760000000
const SETTINGS = { ad_account_id: '549755885175', access_token: 'pina_TOKEN' };
const URL = 'https://api.pinterest.com/v5/ad_accounts/549755885175/events';
const HEADERS = { 'content-type': 'application/json', authorization: 'Bearer pina_TOKEN' };

const UA = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';
const consent = { analytics: true, personalization: true, marketing: true };
const user = { id: 'CUST-881', email: ' Jane.Doe@Example.com ', phone: '+40 722 123 456', first_name: 'Jane', last_name: 'Doe', city: 'Cluj-Napoca', region: 'CJ', postal_code: '400001', country: 'RO' };
const shirt = { id: 'SKU-RED-M', parent_id: 'SKU-RED', name: 'Linen Shirt Red M', parent_name: 'Linen Shirt', price_base: 59.9, price: 49.9, tax_included: true, tax_percent: 19, quantity: 2, category: 'Shirts', type: 'variable', stock_status: true };
const mug = { id: 'SKU-MUG', parent_id: 'SKU-MUG', name: 'Coffee Mug', price_base: 15, price: 15, tax_included: true, tax_percent: 19, quantity: 1, category: 'Kitchen', type: 'simple', stock_status: true };
const web = (url: string) => ({ environment: 'prod', data_source: 'website', user_agent: UA, overide_ip: '2a02:2f0e:1234::1', url });

const H = {
  em: '86e0b9e56c17cc4d12387e1949b85053fbe73bc3ce5a1188713a9d300cc6133d', // jane.doe@example.com
  ph: '8ef20d6edc1f705a87117f841de7596bbfa47c0caf407fd86c040e8338bbd340', // 40722123456: digits, with the country code
  fn: '81f8f6dde88365f3928796ec7aa53f72820b06db8664f5fe76a7eb13e24546a2', // jane
  ln: '799ef92a11af918e3fb741df42934f3b568ed2d93ac1df74f1b8d41a27932a6f', // doe
  ct: '14d3fe793c6f3e10ec4e3b4d422d664882fbcd61f6eaf1a8d06459c9a61404a2', // clujnapoca
  st: 'cef705c4e0ecbe54932504a681ffd800a3f3f7d4b55a650e3ddc92b3d7ff9ddb', // cj
  zp: 'a5bc8dcde81ed9dbad6edf4f14b3b8e1201702eaa27ab7f8cb708ffe7f49ddc9', // 400001
  country: '7ef9ec0cf2c4facafddd03ab96eca0939d6749b49952bd816f1e0cc6901941d5', // ro
  external_id: '9967dcee56532704d42421d462ff1cf0f6a5dd522730db5d62ae81478fd0473b', // CUST-881: case kept
};
const HASHED = {
  em: [H.em], ph: [H.ph], fn: [H.fn], ln: [H.ln], ct: [H.ct], st: [H.st], zp: [H.zp], country: [H.country], external_id: [H.external_id],
};
const SHIRT_2 = { id: 'SKU-RED-M', item_price: '49.9', quantity: 2 };
const MUG_1 = { id: 'SKU-MUG', item_price: '15', quantity: 1 };

const golden = goldenHarness({ plugin, destination: { id: 'dst_pin', name: 'Pinterest' }, account: ACCOUNT, settings: SETTINGS, receivedAt: RECEIVED, now: RECEIVED + 2000 });

describe('pinterest golden requests', () => {
  it('checkout_completed → checkout with every hash, IP, UA, the _epik click id and string amounts', () => {
    const payload = {
      event: { name: 'checkout_completed', value: 134.85, currency: 'EUR', id: 'ORD-10045' },
      context: web('https://shop.example/checkout/thank-you'),
      products: [shirt, mug],
      shipping: [{ name: 'Courier', value: 20.05, tax_included: true, tax_percent: 19 }],
      payments: [{ name: 'Card', value: 134.85, type: 'card' }],
      user, consent,
      cookies: [{ name: '_epik', value: 'dj0yJnU9Epik-Cookie_1' }, { name: '_fbp', value: 'fb.1.1712345678901.1234567890' }],
    };
    expectOneRequest(golden.run(payload, 'ORD-10045'), {
      url: URL, headers: HEADERS, eventId: 'ORD-10045',
      body: {
        data: [{
          event_name: 'checkout', action_source: 'web', event_time: 1760000000, event_id: 'ORD-10045',
          event_source_url: 'https://shop.example/checkout/thank-you',
          user_data: { ...HASHED, client_ip_address: '2a02:2f0e:1234::1', client_user_agent: UA, click_id: 'dj0yJnU9Epik-Cookie_1' },
          custom_data: { value: '134.85', currency: 'EUR', content_ids: ['SKU-RED-M', 'SKU-MUG'], contents: [SHIRT_2, MUG_1], num_items: 3, order_id: 'ORD-10045' },
        }],
      },
    });
  });

  it('product_added_to_cart → add_to_cart, epik from the landing URL, test mode in the query', () => {
    const payload = {
      event: { name: 'product_added_to_cart', value: 99.8, currency: 'EUR' },
      context: { ...web('https://shop.example/p/linen-shirt'), landing_url: 'https://shop.example/?epik=Epik.From.Url' },
      products: [shirt],
      user: { email: 'ana@example.com' }, consent,
    };
    const result = golden.run(payload, 'tl_add_1', { ...SETTINGS, test: true });
    expectOneRequest(result, {
      url: `${URL}?test=true`, headers: HEADERS, eventId: 'tl_add_1',
      body: {
        data: [{
          event_name: 'add_to_cart', action_source: 'web', event_time: 1760000000, event_id: 'tl_add_1',
          event_source_url: 'https://shop.example/p/linen-shirt',
          user_data: { em: ['8e43ca37701228e74983efdbd0cff5c16b3b1e5d4e29a7c05626d4d25a018e11'], client_ip_address: '2a02:2f0e:1234::1', client_user_agent: UA, click_id: 'Epik.From.Url' }, // ana@example.com
          custom_data: { value: '99.8', currency: 'EUR', content_ids: ['SKU-RED-M'], contents: [SHIRT_2], num_items: 2 },
        }],
      },
    });
    expect(result.warnings).to.deep.equal(['pinterest: test is on: Pinterest checks these events and records none; turn it off for real traffic']);
  });

  it('lead_created from a CRM → lead, offline; a warning when nothing can match the person', () => {
    const payload = { event: { name: 'lead_created', id: 'LEAD-2001' }, context: { environment: 'prod', data_source: 'crm' }, user: { id: 'CUST-881' }, consent };
    const result = golden.run(payload, 'LEAD-2001');
    expectOneRequest(result, {
      url: URL, eventId: 'LEAD-2001',
      body: {
        data: [{
          event_name: 'lead', action_source: 'offline', event_time: 1760000000, event_id: 'LEAD-2001',
          event_source_url: 'https://shop.example', // no context.url: validation puts the account host there
          user_data: { external_id: [H.external_id] },
        }],
      },
    });
    expect(result.warnings).to.deep.equal([
      'pinterest: Pinterest needs a hashed email, or both the client IP address (context.overide_ip) and user agent; this event has neither and may not be matched',
    ]);
  });

  it('cart_viewed in the iOS app → page_visit, app_ios', () => {
    const payload = {
      event: { name: 'cart_viewed', value: 114.8, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'app', user_agent: 'ShopApp/3.2 (iPhone; iOS 17.5)', overide_ip: '203.0.113.9' },
      products: [shirt, mug], user, consent,
    };
    const [req] = expectReady(golden.run(payload, 'tl_cart_1'));
    expect(JSON.parse(req.body).data[0]).to.deep.include({ event_name: 'page_visit', action_source: 'app_ios' });
    expect(JSON.parse(req.body).data[0].custom_data).to.deep.equal({
      value: '114.8', currency: 'EUR', content_name: 'cart', content_ids: ['SKU-RED-M', 'SKU-MUG'], contents: [SHIRT_2, MUG_1], num_items: 3,
    });
  });

  it('events without a default rule are skipped; marketing consent refused sends nothing', () => {
    expectSkipped(golden.run({ event: { name: 'order_canceled', id: 'ORD-10045' }, context: { environment: 'prod', data_source: 'admin' }, consent }, 'ORD-10045'), 'no_matching_rule');
    const refused = { event: { name: 'lead_created', id: 'L-9' }, context: web('https://shop.example/contact'), user, consent: { ...consent, marketing: false } };
    expectSkipped(golden.run(refused, 'L-9'), 'consent');
  });

  it('an account rule writing what Pinterest does not take is refused before sending, naming the rule and the path', () => {
    const payload = { event: { name: 'lead_created', id: 'L-3' }, context: web('https://shop.example/contact'), user, consent };
    const mistaken = [{ id: 'acct.lead', event: 'lead_created', output: { event_name: 'Lead', 'custom_data.value': 'ten' } }];
    expect(() => golden.run(payload, 'L-3', SETTINGS, mistaken)).to.throw(NativeSchemaError,
      'pinterest: rule acct.lead produced a native event the pinterest schema refuses (/event_name: must be equal to one of the allowed values: ' +
      '["checkout","add_to_cart","page_visit","view_category","search","lead","signup","custom"]; /custom_data/value: must be number; ' +
      '/custom_data/value: must match pattern "^[0-9]+(\\.[0-9]+)?$"; /custom_data/value: must match a schema in anyOf); nothing sent');
  });
});
