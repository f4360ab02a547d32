// End to end through the real pipeline: payload → validateEvent → mapEventForDestination with
// this folder's rules.json → the exact Snap request, body compared byte for byte. The e-mail,
// phone and name hashes are Snap's own documented examples (Conversions API, Parameters:
// Person@Example.com, +44 844 412 4653, John, Raphaël); the others are literals computed from
// the hand-normalised string in their comment with `printf %s 'clujnapoca' | sha256sum`.
import { expect } from 'chai';
import { NativeSchemaError } from 'tracklane/sdk';
import { expectOneRequest, expectReady, expectSkipped, goldenHarness } from 'tracklane/sdk/testing';
import plugin from './index.ts';

const ACCOUNT = { scriptId: 'AB12CD34', country: 'RO', host: 'https://shop.example' };
const RECEIVED = 1_760_000_000_123; // event_time 1760000000
const PIXEL = '1ec32188-754e-4be2-8e55-c949a984a39f';
const SETTINGS = { pixel_id: PIXEL, access_token: 'snap_TOKEN' };
const URL = `https://tr.snapchat.com/v3/${PIXEL}/events?access_token=snap_TOKEN`;
const HEADERS = { 'content-type': 'application/json' };

const UA = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';
const consent = { analytics: true, personalization: true, marketing: true };
const user = { id: 'CUST-881', email: ' Person@Example.com ', phone: '+44 844 412 4653', first_name: 'John', last_name: 'Raphaël', city: 'Cluj-Napoca', region: 'CJ', postal_code: '400001', country: 'RO' };
const shirt = { id: 'SKU-RED-M', parent_id: 'SKU-RED', name: 'Linen Shirt Red M', parent_name: 'Linen Shirt', price_base: 59.9, price: 49.9, tax_included: true, tax_percent: 19, quantity: 2, category: 'Shirts', type: 'variable', stock_status: true };
const mug = { id: 'SKU-MUG', parent_id: 'SKU-MUG', name: 'Coffee Mug', price_base: 15, price: 15, tax_included: true, tax_percent: 19, quantity: 1, category: 'Kitchen', type: 'simple', stock_status: true };
const web = (url: string) => ({ environment: 'prod', data_source: 'website', user_agent: UA, overide_ip: '2a02:2f0e:1234::1', url });

const H = {
  em: '542d240129883c019e106e3b1b2d3f3cb3537c43c425364de8e951d5a3083345', // person@example.com (Snap's example)
  ph: 'dc008fda46e2e64002cf2f82a4906236282d431c4f75e5b60bfe79fc48546383', // 448444124653 (Snap's example: no +, country code kept)
  fn: '96d9632f363564cc3032521409cf22a852f2032eec099ed5967c0d000cec607a', // john (Snap's example)
  ln: 'e74bb89e718fe1e19c422a48382870399f8bf7ca8dfa008739e75b0be76627b7', // raphaël (Snap's example: UTF-8 kept)
  ct: '14d3fe793c6f3e10ec4e3b4d422d664882fbcd61f6eaf1a8d06459c9a61404a2', // clujnapoca
  st: 'cef705c4e0ecbe54932504a681ffd800a3f3f7d4b55a650e3ddc92b3d7ff9ddb', // cj
  zp: 'a5bc8dcde81ed9dbad6edf4f14b3b8e1201702eaa27ab7f8cb708ffe7f49ddc9', // 400001
  country: '7ef9ec0cf2c4facafddd03ab96eca0939d6749b49952bd816f1e0cc6901941d5', // ro
  external_id: '9967dcee56532704d42421d462ff1cf0f6a5dd522730db5d62ae81478fd0473b', // CUST-881: case kept
};
const HASHED = {
  em: [H.em], ph: [H.ph], fn: [H.fn], ln: [H.ln], ct: [H.ct], st: [H.st], zp: [H.zp], country: [H.country], external_id: [H.external_id],
};
const SHIRT_2 = { id: 'SKU-RED-M', quantity: '2', item_price: '49.9' };
const MUG_1 = { id: 'SKU-MUG', quantity: '1', item_price: '15' };

const golden = goldenHarness({ plugin, destination: { id: 'dst_snap', name: 'Snap' }, account: ACCOUNT, settings: SETTINGS, receivedAt: RECEIVED, now: RECEIVED + 2000 });

describe('snapchat golden requests', () => {
  it('checkout_completed → PURCHASE with Snap\'s documented hashes, IP, UA, the click id and the _scid cookie', () => {
    const payload = {
      event: { name: 'checkout_completed', value: 134.85, currency: 'EUR', id: 'ORD-10045' },
      context: { ...web('https://shop.example/checkout/thank-you'), landing_url: 'https://shop.example/?ScCid=Snap-Click_1' },
      products: [shirt, mug],
      shipping: [{ name: 'Courier', value: 20.05, tax_included: true, tax_percent: 19 }],
      payments: [{ name: 'Card', value: 134.85, type: 'card' }],
      user, consent,
      cookies: [{ name: '_scid', value: '7b4d1e52-7f2a-4b55-9c1e-0d6e4f3a2b19' }, { name: '_fbp', value: 'fb.1.1712345678901.1234567890' }],
    };
    expectOneRequest(golden.run(payload, 'ORD-10045'), {
      url: URL, headers: HEADERS, eventId: 'ORD-10045',
      body: {
        data: [{
          event_name: 'PURCHASE', event_time: 1760000000, event_id: 'ORD-10045', action_source: 'WEB',
          event_source_url: 'https://shop.example/checkout/thank-you',
          user_data: {
            ...HASHED, client_ip_address: '2a02:2f0e:1234::1', client_user_agent: UA,
            sc_click_id: 'Snap-Click_1', sc_cookie1: '7b4d1e52-7f2a-4b55-9c1e-0d6e4f3a2b19',
          },
          custom_data: { value: 134.85, currency: 'EUR', content_ids: ['SKU-RED-M', 'SKU-MUG'], contents: [SHIRT_2, MUG_1], num_items: 3, order_id: 'ORD-10045' },
        }],
      },
    });
  });

  it('product_added_to_cart → ADD_CART, click id from sc_click_id; test_event_code sends to /events/validate', () => {
    const payload = {
      event: { name: 'product_added_to_cart', value: 99.8, currency: 'EUR' },
      context: web('https://shop.example/p/linen-shirt?sc_click_id=Click.From.Url'),
      products: [shirt],
      user: { email: 'ana@example.com' }, consent,
    };
    const result = golden.run(payload, 'tl_add_1', { ...SETTINGS, test_event_code: 'TEST1' });
    expectOneRequest(result, {
      url: `https://tr.snapchat.com/v3/${PIXEL}/events/validate?access_token=snap_TOKEN`, headers: HEADERS, eventId: 'tl_add_1',
      body: {
        data: [{
          event_name: 'ADD_CART', event_time: 1760000000, event_id: 'tl_add_1', action_source: 'WEB',
          event_source_url: 'https://shop.example/p/linen-shirt?sc_click_id=Click.From.Url',
          user_data: { em: ['8e43ca37701228e74983efdbd0cff5c16b3b1e5d4e29a7c05626d4d25a018e11'], client_ip_address: '2a02:2f0e:1234::1', client_user_agent: UA, sc_click_id: 'Click.From.Url' }, // ana@example.com
          custom_data: { value: 99.8, currency: 'EUR', content_ids: ['SKU-RED-M'], contents: [SHIRT_2], num_items: 2 },
        }],
      },
    });
    expect(result.warnings).to.deep.equal([
      'snapchat: test_event_code is set: events go to Snap\'s /events/validate, which checks them and records none in production; remove it for real traffic',
    ]);
  });

  it('lead_created from a CRM → SIGN_UP, OFFLINE; warnings when nothing can match the person', () => {
    const payload = { event: { name: 'lead_created', id: 'LEAD-2001' }, context: { environment: 'prod', data_source: 'crm' }, user: { id: 'CUST-881' }, consent };
    const result = golden.run(payload, 'LEAD-2001');
    expectOneRequest(result, {
      url: URL, eventId: 'LEAD-2001',
      body: {
        data: [{
          event_name: 'SIGN_UP', event_time: 1760000000, event_id: 'LEAD-2001', action_source: 'OFFLINE',
          event_source_url: 'https://shop.example', // no context.url: validation puts the account host there
          user_data: { external_id: [H.external_id] },
        }],
      },
    });
    expect(result.warnings).to.deep.equal([
      'snapchat: Snap needs a hashed email or phone, or both the client IP address (context.overide_ip) and user agent; this event has none of them and Snap refuses it as insufficient PII',
    ]);
  });

  it('product_viewed → VIEW_CONTENT with its category; cart_viewed → PAGE_VIEW of the cart; a Snapchat ad visit without ScCid is said', () => {
    const viewed = {
      event: { name: 'product_viewed', value: 49.9, currency: 'EUR' },
      context: { ...web('https://shop.example/p/linen-shirt'), landing_url: 'https://shop.example/?utm_source=snapchat&utm_medium=paid' },
      products: [{ ...shirt, quantity: 1 }], user, consent,
    };
    const result = golden.run(viewed, 'tl_view_1');
    const [view] = expectReady(result);
    expect(JSON.parse(view.body).data[0]).to.deep.include({ event_name: 'VIEW_CONTENT', action_source: 'WEB' });
    expect(JSON.parse(view.body).data[0].custom_data).to.deep.equal({
      value: 49.9, currency: 'EUR', content_category: 'Shirts', content_ids: ['SKU-RED-M'], contents: [{ id: 'SKU-RED-M', quantity: '1', item_price: '49.9' }],
    });
    expect(result.warnings).to.deep.equal([
      'snapchat: the visit came from a Snapchat ad (utm_source=snapchat) but carries no ScCid click id: keep ScCid on the landing URL through redirects so the conversion is attributed to the click',
    ]);
    const cart = { event: { name: 'cart_viewed', value: 114.8, currency: 'EUR' }, context: web('https://shop.example/cart'), products: [shirt, mug], user, consent };
    const [req] = expectReady(golden.run(cart, 'tl_cart_1'));
    expect(JSON.parse(req.body).data[0].event_name).to.equal('PAGE_VIEW');
    expect(JSON.parse(req.body).data[0].custom_data).to.deep.equal({
      value: 114.8, currency: 'EUR', content_category: 'cart', content_ids: ['SKU-RED-M', 'SKU-MUG'], contents: [SHIRT_2, MUG_1], num_items: 3,
    });
  });

  it('events without a default rule are skipped; marketing consent refused sends nothing', () => {
    for (const name of ['order_canceled', 'lead_qualified', 'lead_closed', 'product_removed_from_cart']) {
      const payload = name === 'product_removed_from_cart'
        ? { event: { name, value: 15, currency: 'EUR' }, context: web('https://shop.example/cart'), products: [mug], consent }
        : { event: { name, id: 'X-1' }, context: { environment: 'prod', data_source: 'admin' }, consent };
      expectSkipped(golden.run(payload, 'X-1'), 'no_matching_rule');
    }
    const refused = { event: { name: 'lead_created', id: 'L-9' }, context: web('https://shop.example/contact'), user, consent: { ...consent, marketing: false } };
    expectSkipped(golden.run(refused, 'L-9'), 'consent');
  });

  it('an account rule writing what Snap does not take is refused before sending, naming the rule and the path', () => {
    const payload = { event: { name: 'lead_created', id: 'L-3' }, context: web('https://shop.example/contact'), user, consent };
    const mistaken = [{ id: 'acct.lead', event: 'lead_created', output: { event_name: 'LEAD', 'user_data.em': 'x' } }];
    expect(() => golden.run(payload, 'L-3', SETTINGS, mistaken)).to.throw(NativeSchemaError,
      /^snapchat: rule acct\.lead produced a native event the snapchat schema refuses \(\/: must NOT have additional properties "user_data"; \/event_name: must be equal to one of the allowed values: \["PAGE_VIEW",.*\]\); nothing sent$/);
  });
});
