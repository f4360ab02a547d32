// End to end through the real pipeline: payload → validateEvent → mapEventForDestination with
// this folder's rules.json → the exact Reddit request, body compared byte for byte. Hashes
// are literals: the e-mail, phone and external id ones are the examples of Reddit's own
// match-key documentation (`Al.ice$+Apple@Example.Com` and `alice@example.com` both give
// ff8d98…, `+15554441234` gives e5b124…); the others come from the hand-normalised string in
// their comment with `printf %s '203.0.113.9' | sha256sum`.
import { expect } from 'chai';
import { NativeSchemaError } from 'tracklane/sdk';
import { expectOneRequest, expectReady, expectSkipped, goldenHarness } from 'tracklane/sdk/testing';
import plugin from './index.ts';

const ACCOUNT = { scriptId: 'AB12CD34', country: 'US', host: 'https://shop.example' };
const RECEIVED = 1_760_000_000_123; // event_at, in milliseconds as v3 takes it
const SETTINGS = { pixel_id: 'a2_gp7k2m9xq1', access_token: 'rdt_TOKEN' };
const URL = 'https://ads-api.reddit.com/api/v3/pixels/a2_gp7k2m9xq1/conversion_events';
const HEADERS = { 'content-type': 'application/json', authorization: 'Bearer rdt_TOKEN' };

const UA = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';
const RDT_UUID = '1677712978045.b8f7eb7d-b357-437b-8bd3-e1c8166c7132'; // the shape of Reddit's uuid example
const consent = { analytics: true, personalization: true, marketing: true };
const user = { id: 'customer12345', email: 'Al.ice$+Apple@Example.Com', phone: '+1 (555) 444-1234' };
const shirt = { id: 'SKU-RED-M', parent_id: 'SKU-RED', name: 'Linen Shirt Red M', parent_name: 'Linen Shirt', price_base: 59.9, price: 49.9, tax_included: true, tax_percent: 19, quantity: 2, category: 'Shirts', type: 'variable', stock_status: true };
const mug = { id: 'SKU-MUG', parent_id: 'SKU-MUG', name: 'Coffee Mug', price_base: 15, price: 15, tax_included: true, tax_percent: 19, quantity: 1, category: 'Kitchen', type: 'simple', stock_status: true };
const web = (url: string) => ({ environment: 'prod', data_source: 'website', user_agent: UA, overide_ip: '2A02:2F0E:1234:0:0:0:0:1', url });

const H = {
  email: 'ff8d9819fc0e12bf0d24892e45987e249a28dce836a85cad60e28eaaa8c6d976', // alice@example.com (Reddit's example)
  phone: 'e5b124c58580eb16bd959b8d0cac12b12c952e2ceae0203d416cff94f10b994a', // +15554441234 (Reddit's example)
  external_id: 'a4cc2fc5adf58a029291c1514d273989113a1d05e1d753c1d0c3a848af7109cc', // customer12345 (Reddit's example)
  ip6: '1cd0d64ab9a9806c1fd10bc108853aff9464bdd564ef007ef0f2481c5a1b7bb5', // 2a02:2f0e:1234::1
  ip4: 'd861b7e91033ebc1c1e8e7af3929010158b3241b54ca87ef73e79c32f26400ec', // 203.0.113.9
};
const SHIRT = { id: 'SKU-RED-M', name: 'Linen Shirt Red M', category: 'Shirts', quantity: 2, item_price: 49.9 };
const MUG = { id: 'SKU-MUG', name: 'Coffee Mug', category: 'Kitchen', quantity: 1, item_price: 15 };

const golden = goldenHarness({ plugin, destination: { id: 'dst_rdt', name: 'Reddit' }, account: ACCOUNT, settings: SETTINGS, receivedAt: RECEIVED, now: RECEIVED + 2000 });

describe('reddit golden requests', () => {
  it('checkout_completed → PURCHASE with Reddit-normalised hashes, the rdt_cid click id, the _rdt_uuid cookie and conversion_id', () => {
    const payload = {
      event: { name: 'checkout_completed', value: 134.85, currency: 'USD', id: 'ORD-10045' },
      context: { ...web('https://shop.example/checkout/thank-you'), landing_url: 'https://shop.example/?rdt_cid=3184742045291813272&utm_source=reddit' },
      products: [shirt, mug],
      shipping: [{ name: 'Courier', value: 20.05, tax_included: true, tax_percent: 19 }],
      payments: [{ name: 'Card', value: 134.85, type: 'card' }],
      user, consent,
      cookies: [{ name: '_rdt_uuid', value: RDT_UUID }, { name: '_fbp', value: 'fb.1.1712345678901.1234567890' }],
    };
    expectOneRequest(golden.run(payload, 'ORD-10045'), {
      url: URL, headers: HEADERS, eventId: 'ORD-10045',
      body: {
        data: {
          events: [{
            event_at: 1760000000123, action_source: 'WEBSITE', event_source_url: 'https://shop.example/checkout/thank-you',
            click_id: '3184742045291813272',
            type: { tracking_type: 'PURCHASE' },
            metadata: { value: 134.85, currency: 'USD', item_count: 3, products: [SHIRT, MUG], conversion_id: 'ORD-10045' },
            user: { email: H.email, phone_number: H.phone, external_id: H.external_id, ip_address: H.ip6, user_agent: UA, uuid: RDT_UUID },
          }],
        },
      },
    });
  });

  it('product_added_to_cart → ADD_TO_CART; test_event_code goes as data.test_id, with a warning', () => {
    const payload = {
      event: { name: 'product_added_to_cart', value: 99.8, currency: 'USD' },
      context: { ...web('https://shop.example/p/linen-shirt?rdt_cid=CID-From-Page'), overide_ip: '203.0.113.9' },
      products: [shirt],
      user: { email: 'alice@example.com' }, consent,
    };
    const result = golden.run(payload, 'tl_add_1', { ...SETTINGS, test_event_code: 't2_test123' });
    expectOneRequest(result, {
      url: URL, headers: HEADERS, eventId: 'tl_add_1',
      body: {
        data: {
          test_id: 't2_test123',
          events: [{
            event_at: 1760000000123, action_source: 'WEBSITE', event_source_url: 'https://shop.example/p/linen-shirt?rdt_cid=CID-From-Page',
            click_id: 'CID-From-Page',
            type: { tracking_type: 'ADD_TO_CART' },
            metadata: { value: 99.8, currency: 'USD', item_count: 2, products: [SHIRT], conversion_id: 'tl_add_1' },
            user: { email: H.email, ip_address: H.ip4, user_agent: UA },
          }],
        },
      },
    });
    expect(result.warnings).to.deep.equal([
      'reddit: test_event_code is set: Reddit sends these events to Event Testing (one event per request is shown there); remove it for real traffic',
    ]);
  });

  it('product_viewed → VIEW_CONTENT and cart_viewed → PAGE_VISIT, products only (no value)', () => {
    const viewed = { event: { name: 'product_viewed', value: 49.9, currency: 'USD' }, context: web('https://shop.example/p/linen-shirt'), products: [{ ...shirt, quantity: 1 }], user, consent };
    const [view] = expectReady(golden.run(viewed, 'tl_view_1'));
    expect(JSON.parse(view.body).data.events[0]).to.deep.include({ type: { tracking_type: 'VIEW_CONTENT' }, metadata: { products: [{ ...SHIRT, quantity: 1 }], conversion_id: 'tl_view_1' } });
    const cart = { event: { name: 'cart_viewed', value: 114.8, currency: 'USD' }, context: web('https://shop.example/cart'), products: [shirt, mug], user, consent };
    const [page] = expectReady(golden.run(cart, 'tl_cart_1'));
    expect(JSON.parse(page.body).data.events[0]).to.deep.include({ type: { tracking_type: 'PAGE_VISIT' }, metadata: { products: [SHIRT, MUG], conversion_id: 'tl_cart_1' } });
  });

  it('lead_created from a CRM → LEAD, action_source OTHER, no page URL; a warning when nothing can match the person', () => {
    const crm = { environment: 'prod', data_source: 'crm' };
    const [req] = expectReady(golden.run({ event: { name: 'lead_created', id: 'LEAD-2001', value: 40, currency: 'USD' }, context: crm, user: { id: 'customer12345' }, consent }, 'LEAD-2001'));
    expect(JSON.parse(req.body)).to.deep.equal({
      data: {
        events: [{
          event_at: 1760000000123, action_source: 'OTHER', type: { tracking_type: 'LEAD' },
          metadata: { value: 40, currency: 'USD', conversion_id: 'LEAD-2001' },
          user: { external_id: H.external_id },
        }],
      },
    });
    const bare = golden.run({ event: { name: 'lead_created', id: 'LEAD-2002' }, context: crm, consent }, 'LEAD-2002');
    expect(bare.warnings).to.deep.equal([
      'reddit: no match keys — email, phone, external id, the rdt_cid click id, the _rdt_uuid cookie and IP address with user agent all missing: Reddit cannot attribute this event',
    ]);
  });

  it('a visit from a Reddit ad that lost its rdt_cid is sent with a warning; a malformed _rdt_uuid is not sent', () => {
    const payload = {
      event: { name: 'lead_created', id: 'L-7' },
      context: { ...web('https://shop.example/contact'), landing_url: 'https://shop.example/?utm_source=reddit&utm_medium=paid' },
      user: { email: 'alice@example.com' }, consent,
      cookies: [{ name: '_rdt_uuid', value: 'not-a-reddit-uuid' }],
    };
    const result = golden.run(payload, 'L-7');
    const [req] = expectReady(result);
    const [ev] = JSON.parse(req.body).data.events;
    expect(ev).to.not.have.property('click_id');
    expect(ev.user).to.deep.equal({ email: H.email, ip_address: H.ip6, user_agent: UA });
    expect(result.warnings).to.deep.equal([
      'reddit: cookie _rdt_uuid does not have the expected format; ignored',
      'reddit: the visit came from a Reddit ad (utm_source=reddit) but carries no rdt_cid click id: keep rdt_cid on the landing URL through redirects (or turn on the click ID parameter in Reddit Ads) so the conversion is attributed to the click',
    ]);
  });

  it('events without a default rule are skipped; marketing consent refused sends nothing', () => {
    for (const name of ['order_canceled', 'product_removed_from_cart', 'lead_qualified', 'lead_closed']) {
      const payload = name === 'product_removed_from_cart'
        ? { event: { name, value: 99.8, currency: 'USD' }, context: web('https://shop.example/cart'), products: [shirt], consent }
        : { event: { name, id: 'ORD-10045' }, context: { environment: 'prod', data_source: 'admin' }, consent };
      expectSkipped(golden.run(payload, 'ORD-10045'), 'no_matching_rule');
    }
    const refused = { event: { name: 'lead_created', id: 'L-9' }, context: web('https://shop.example/contact'), user, consent: { ...consent, marketing: false } };
    expectSkipped(golden.run(refused, 'L-9'), 'consent');
  });

  it('an account rule may send CUSTOM with its name; one writing what v3 does not take is refused before sending', () => {
    const payload = { event: { name: 'lead_created', id: 'L-3' }, context: web('https://shop.example/contact'), user, consent };
    const custom = [{ id: 'acct.demo', event: 'lead_created', output: { 'type.tracking_type': 'CUSTOM', 'type.custom_event_name': 'Demo Booked', action_source: 'PHYSICAL_STORE' } }];
    const [req] = expectReady(golden.run(payload, 'L-3', SETTINGS, custom));
    expect(JSON.parse(req.body).data.events[0]).to.deep.equal({
      event_at: 1760000000123, action_source: 'PHYSICAL_STORE', type: { tracking_type: 'CUSTOM', custom_event_name: 'Demo Booked' },
      metadata: { conversion_id: 'L-3' }, user: { email: H.email, phone_number: H.phone, external_id: H.external_id },
    });
    const mistaken = [{ id: 'acct.lead', event: 'lead_created', output: { 'type.tracking_type': 'Lead', 'metadata.value': 'ten' } }];
    expect(() => golden.run(payload, 'L-3', SETTINGS, mistaken)).to.throw(NativeSchemaError, /rule acct\.lead produced a native event the reddit schema refuses \(.*\/type\/tracking_type: must be equal to one of the allowed values.*\/metadata\/value: must be number/);
  });
});
