// End to end through the real pipeline: payload → validateEvent → mapEventForDestination with
// the rules in rules/ → the exact Meta request. Every expected body is written out by hand;
// hashes were computed independently with
// `node -e "console.log(require('crypto').createHash('sha256').update('jane.doe@example.com').digest('hex'))"`.
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { SPEC_EVENT_NAMES } from 'tracklane/sdk';
import { expectOneRequest, expectReady, expectSkipped, goldenHarness } from 'tracklane/sdk/testing';
import plugin from './index.ts';

const ACCOUNT = { scriptId: 'AB12CD34', country: 'RO', host: 'https://shop.example' };
const RECEIVED = 1_760_000_000_123; // event_time 1760000000
const SETTINGS = { pixel_id: '1234567890', access_token: 'EAAtoken' };
const URL_DEFAULT = 'https://graph.facebook.com/v25.0/1234567890/events?access_token=EAAtoken';

// ---- payloads --------------------------------------------------------------------------
const UA = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';
const consent = { analytics: true, personalization: true, marketing: true };
const cookies = [
  { name: '_fbp', value: 'fb.1.1712345678901.1234567890' },
  { name: '_fbc', value: 'fb.1.1712345678901.IwAR2xyzClick' },
  { name: '_ttp', value: '2abcTTPcookie01' },
];
const user = { id: 'CUST-881', email: ' Jane.Doe@Example.com ', phone: '+40 722 123 456', first_name: 'Jane', last_name: 'Doe', city: 'Cluj-Napoca', region: 'CJ', postal_code: '400001', country: 'RO' };
const shirt = { id: 'SKU-RED-M', parent_id: 'SKU-RED', name: 'Linen Shirt Red M', parent_name: 'Linen Shirt', price_base: 59.9, price: 49.9, tax_included: true, tax_percent: 19, quantity: 2, category: 'Shirts', brand: 'Acme', type: 'variable', stock_status: true };
const mug = { id: 'SKU-MUG', parent_id: 'SKU-MUG', name: 'Coffee Mug', price_base: 15, price: 15, tax_included: true, tax_percent: 19, quantity: 1, category: 'Kitchen', type: 'simple', stock_status: true };
const web = (url: string) => ({ environment: 'prod', data_source: 'website', user_agent: UA, overide_ip: '2a02:2f0e:1234::1', url, referrer_url: 'https://www.google.com/' });

const PAYLOADS: Record<string, Record<string, unknown>> = {
  checkout_completed: {
    event: { name: 'checkout_completed', value: 134.85, currency: 'EUR', id: 'ORD-10045' },
    context: web('https://shop.example/checkout/thank-you'),
    products: [shirt, mug],
    shipping: [{ name: 'Courier', value: 20.05, tax_included: true, tax_percent: 19 }],
    payments: [{ name: 'Card', value: 134.85, type: 'card' }],
    user, consent, cookies,
  },
  order_canceled: { event: { name: 'order_canceled', id: 'ORD-10045' }, context: { environment: 'prod', data_source: 'admin' }, user, consent },
  lead_created: { event: { name: 'lead_created', id: 'LEAD-2001' }, context: web('https://shop.example/contact'), user, consent, cookies },
  lead_qualified: {
    event: { name: 'lead_qualified', id: 'LEAD-2001', value: 500, currency: 'EUR', properties: { lead_event_source: 'HubSpot', meta_lead_id: '1234567890123456' } },
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
    context: { environment: 'prod', data_source: 'website', user_agent: UA, overide_ip: '203.0.113.9', url: 'https://shop.example/p/linen-shirt?fbclid=IwAR9landing' },
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

// ---- expected user_data (hashes of hand-normalised values) --------------------------------
const H = {
  em: '86e0b9e56c17cc4d12387e1949b85053fbe73bc3ce5a1188713a9d300cc6133d', // jane.doe@example.com
  ph: '8ef20d6edc1f705a87117f841de7596bbfa47c0caf407fd86c040e8338bbd340', // 40722123456
  fn: '81f8f6dde88365f3928796ec7aa53f72820b06db8664f5fe76a7eb13e24546a2', // jane
  ln: '799ef92a11af918e3fb741df42934f3b568ed2d93ac1df74f1b8d41a27932a6f', // doe
  ct: '14d3fe793c6f3e10ec4e3b4d422d664882fbcd61f6eaf1a8d06459c9a61404a2', // clujnapoca
  st: 'cef705c4e0ecbe54932504a681ffd800a3f3f7d4b55a650e3ddc92b3d7ff9ddb', // cj
  zp: 'a5bc8dcde81ed9dbad6edf4f14b3b8e1201702eaa27ab7f8cb708ffe7f49ddc9', // 400001
  country: '7ef9ec0cf2c4facafddd03ab96eca0939d6749b49952bd816f1e0cc6901941d5', // ro
  external_id: '6a952ae0d75c195d5754f4f7d4de7fb3fa347566dffb9ae7337690e7745a7105', // cust-881: lower-cased, as Meta's SDK does
};
const HASHED_USER = { em: H.em, ph: H.ph, fn: H.fn, ln: H.ln, ct: H.ct, st: H.st, zp: H.zp, country: H.country, external_id: H.external_id };
const WEB_USER = {
  ...HASHED_USER,
  client_ip_address: '2a02:2f0e:1234::1',
  client_user_agent: UA,
  fbc: 'fb.1.1712345678901.IwAR2xyzClick',
  fbp: 'fb.1.1712345678901.1234567890',
};
const SHIRT_2 = { id: 'SKU-RED-M', quantity: 2, item_price: 49.9 };
const MUG_1 = { id: 'SKU-MUG', quantity: 1, item_price: 15 };

const EXPECTED: Record<string, Record<string, unknown> | null> = {
  checkout_completed: {
    event_name: 'Purchase', event_time: 1760000000, event_id: 'ORD-10045', action_source: 'website',
    event_source_url: 'https://shop.example/checkout/thank-you', referrer_url: 'https://www.google.com/',
    user_data: WEB_USER,
    custom_data: {
      value: 134.85, currency: 'EUR', content_ids: ['SKU-RED-M', 'SKU-MUG'], contents: [SHIRT_2, MUG_1],
      content_type: 'product', num_items: 3, order_id: 'ORD-10045',
    },
  },
  order_canceled: null,
  lead_created: {
    event_name: 'Lead', event_time: 1760000000, event_id: 'LEAD-2001', action_source: 'website',
    event_source_url: 'https://shop.example/contact', referrer_url: 'https://www.google.com/',
    user_data: WEB_USER,
  },
  lead_qualified: {
    event_name: 'QualifiedLead', event_time: 1760000000, event_id: 'LEAD-2001', action_source: 'system_generated',
    event_source_url: 'https://shop.example', // no context.url: the account host
    user_data: { ...HASHED_USER, lead_id: '1234567890123456' },
    custom_data: { value: 500, currency: 'EUR', event_source: 'crm', lead_event_source: 'HubSpot' },
  },
  lead_closed: {
    event_name: 'ConvertedLead', event_time: 1760000000, event_id: 'LEAD-2001', action_source: 'system_generated',
    event_source_url: 'https://shop.example', // no context.url: the account host
    user_data: { em: H.em },
    custom_data: { value: 1200, currency: 'EUR', event_source: 'crm', lead_event_source: 'tracklane' },
  },
  cart_viewed: {
    event_name: 'ViewContent', event_time: 1760000000, event_id: 'tl_cart_1', action_source: 'website',
    event_source_url: 'https://shop.example/cart', referrer_url: 'https://www.google.com/',
    user_data: WEB_USER,
    custom_data: {
      value: 114.8, currency: 'EUR', content_name: 'cart', content_ids: ['SKU-RED-M', 'SKU-MUG'], contents: [SHIRT_2, MUG_1],
      content_type: 'product', num_items: 3,
    },
  },
  product_viewed: {
    event_name: 'ViewContent', event_time: 1760000000, event_id: 'tl_view_1', action_source: 'website',
    event_source_url: 'https://shop.example/p/linen-shirt?fbclid=IwAR9landing',
    // No user and no _fbc cookie: fbc is built from the fbclid with the event's received time as
    // first-seen time (not the mapping's `now`: mapped again later, the body must not change).
    user_data: { client_ip_address: '203.0.113.9', client_user_agent: UA, fbc: 'fb.1.1760000000123.IwAR9landing' },
    custom_data: {
      value: 49.9, currency: 'EUR', content_name: 'Linen Shirt Red M', content_category: 'Shirts',
      content_ids: ['SKU-RED-M'], contents: [{ id: 'SKU-RED-M', quantity: 1, item_price: 49.9 }], content_type: 'product',
    },
  },
  product_added_to_cart: {
    event_name: 'AddToCart', event_time: 1760000000, event_id: 'tl_add_1', action_source: 'website',
    event_source_url: 'https://shop.example/p/linen-shirt', referrer_url: 'https://www.google.com/',
    user_data: WEB_USER,
    custom_data: { value: 99.8, currency: 'EUR', content_ids: ['SKU-RED-M'], contents: [SHIRT_2], content_type: 'product' },
  },
  product_removed_from_cart: {
    event_name: 'RemoveFromCart', event_time: 1760000000, event_id: 'tl_remove_1', action_source: 'app',
    event_source_url: 'https://shop.example', // no context.url: the account host
    user_data: { external_id: H.external_id, client_user_agent: 'ShopApp/3.2 (iPhone; iOS 17.5)' },
    custom_data: { value: 15, currency: 'EUR', content_ids: ['SKU-MUG'], contents: [MUG_1], content_type: 'product' },
  },
};

const EVENT_IDS: Record<string, string> = {
  cart_viewed: 'tl_cart_1', product_viewed: 'tl_view_1', product_added_to_cart: 'tl_add_1', product_removed_from_cart: 'tl_remove_1',
};

const { run } = goldenHarness({
  plugin, destination: { id: 'dst_meta', name: 'Meta' }, account: ACCOUNT, settings: SETTINGS, receivedAt: RECEIVED, now: RECEIVED + 2_000,
});

describe('meta-capi golden: payload → validateEvent → rules → request', () => {
  for (const name of SPEC_EVENT_NAMES) {
    const expected = EXPECTED[name];
    it(`${name} → ${expected === null ? 'nothing (no rule)' : String(expected.event_name)}`, () => {
      const payload = PAYLOADS[name];
      const result = run(payload, EVENT_IDS[name] ?? String((payload.event as { id: string }).id));
      if (expected === null) return expectSkipped(result, 'no_matching_rule');
      expectOneRequest(result, {
        url: URL_DEFAULT, headers: { 'content-type': 'application/json' }, eventId: expected.event_id as string, body: { data: [expected] },
      });
    });
  }

  it('lead_closed with outcome "lost" → LostLead, without value', () => {
    const payload = {
      event: { name: 'lead_closed', id: 'LEAD-3001', value: 900, currency: 'EUR', properties: { outcome: 'lost' } },
      context: { environment: 'prod', data_source: 'crm' },
      user: { email: 'jane.doe@example.com' }, consent,
    };
    const [req] = expectReady(run(payload, 'LEAD-3001', { ...SETTINGS, lead_event_source: 'Pipedrive' }));
    expect(req.body).to.equal(JSON.stringify({
      data: [{
        event_name: 'LostLead', event_time: 1760000000, event_id: 'LEAD-3001', action_source: 'system_generated',
        event_source_url: 'https://shop.example',
        user_data: { em: H.em },
        custom_data: { event_source: 'crm', lead_event_source: 'Pipedrive' },
      }],
    }));
  });

  it('a purchase without marketing consent is not sent', () => {
    expectSkipped(run({ ...PAYLOADS.checkout_completed, consent: { analytics: true, personalization: true, marketing: false } }, 'ORD-10045'), 'consent');
  });

  it('test_event_code and api_version reach the request', () => {
    const [req] = expectReady(run(PAYLOADS.lead_created, 'LEAD-2001', { ...SETTINGS, api_version: 'v24.0', test_event_code: 'TEST51515' }));
    expect(req.url).to.equal('https://graph.facebook.com/v24.0/1234567890/events?access_token=EAAtoken');
    expect(req.body).to.equal(JSON.stringify({ data: [EXPECTED.lead_created], test_event_code: 'TEST51515' }));
  });

  it('warns (preview, test mode) when a website event lacks client_user_agent; not for a CRM event or a complete one', () => {
    const web = PAYLOADS.checkout_completed as { context: Record<string, unknown> };
    const noUa = { ...PAYLOADS.checkout_completed, context: { ...web.context, user_agent: undefined } };
    const r = run(JSON.parse(JSON.stringify(noUa)), 'ORD-10045');
    expect(r.status).to.equal('ready');
    expect(r.warnings).to.include("meta-capi: website event without client_user_agent: send context.user_agent (the browser's User-Agent); Meta may not use the event for optimisation without it");
    const ok = run(PAYLOADS.checkout_completed, 'ORD-10045');
    expect(ok.warnings.join('\n')).to.not.contain('client_user_agent');
    const crm = run(PAYLOADS.lead_qualified, 'LEAD-2001');
    expect(crm.warnings.join('\n'), 'system_generated needs no user agent').to.not.contain('client_user_agent');
  });

  it('external_id is lower-cased before hashing; external_id_case_sensitive keeps its case; a digest passes unchanged', () => {
    const sha = (v: string) => createHash('sha256').update(v).digest('hex');
    const payload = { ...PAYLOADS.lead_qualified, user: { id: ' CUST-ABC ' } };
    const idOf = (settings: Record<string, unknown>) =>
      JSON.parse(expectReady(run(payload, 'LEAD-2001', { ...SETTINGS, ...settings }))[0].body).data[0].user_data.external_id;
    expect(idOf({})).to.equal(sha('cust-abc'));
    expect(idOf({ external_id_case_sensitive: true })).to.equal(sha('CUST-ABC'));
    const digest = sha('Already-Hashed');
    const pre = JSON.parse(expectReady(run({ ...payload, user: { id: digest.toUpperCase() } }, 'LEAD-2001', { ...SETTINGS, external_id_case_sensitive: true }))[0].body);
    expect(pre.data[0].user_data.external_id).to.equal(digest);
  });
});

