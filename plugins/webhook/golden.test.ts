// End to end through the real pipeline: payload → validateEvent → mapEventForDestination with
// the rules in rules/ → the signed webhook request. Expected bodies are written out by hand;
// signatures are checked with node:crypto directly, not with the plugin's signer.
import { createHash, createHmac } from 'node:crypto';
import { expect } from 'chai';
import { SPEC_EVENT_NAMES } from 'tracklane/sdk';
import { expectOneRequest, expectSkipped, goldenHarness } from 'tracklane/sdk/testing';
import plugin from './index.ts';

const ACCOUNT = { scriptId: 'AB12CD34', country: 'RO', host: 'https://shop.example' };
const RECEIVED = 1_760_000_000_123; // 2025-10-09T08:53:20.123Z
const NOW = RECEIVED + 2_000; // webhook-timestamp 1760000002
const SECRET = 'whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA='; // 32 bytes 0x01..0x20
const SETTINGS = { url: 'https://hooks.example.com/tracklane', secret: SECRET };

// ---- payloads --------------------------------------------------------------------------
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';
const consent = { analytics: true, personalization: true, marketing: true };
const cookies = [{ name: '_ga', value: 'GA1.1.123456789.1712345678' }];
const user = { id: 'CUST-881', email: 'jane.doe@example.com', phone: '+40722123456', country: 'RO' };
const shirt = { id: 'SKU-RED-M', parent_id: 'SKU-RED', name: 'Linen Shirt Red M', parent_name: 'Linen Shirt', price_base: 59.9, price: 49.9, tax_included: true, tax_percent: 19, quantity: 2, category: 'Shirts', brand: 'Acme', type: 'variable', stock_status: true };
const mug = { id: 'SKU-MUG', parent_id: 'SKU-MUG', name: 'Coffee Mug', price_base: 15, price: 15, tax_included: true, tax_percent: 19, quantity: 1, category: 'Kitchen', type: 'simple', stock_status: 'in stock' };
const web = (url: string) => ({ environment: 'prod', data_source: 'website', user_agent: UA, overide_ip: '198.51.100.4', url });

const PAYLOADS: Record<string, Record<string, unknown>> = {
  checkout_completed: {
    event: { name: 'checkout_completed', value: 134.85, currency: 'EUR', id: 'ORD-10045', properties: { channel: 'web' } },
    context: web('https://shop.example/checkout/thank-you'),
    products: [shirt, mug],
    shipping: [{ name: 'Courier', value: 20.05, tax_included: true, tax_percent: 19 }],
    payments: [{ name: 'Card', value: 134.85, type: 'card' }],
    coupons: [{ name: 'WELCOME10', value: 0 }],
    user, consent, cookies,
  },
  order_canceled: { event: { name: 'order_canceled', id: 'ORD-10045' }, context: { environment: 'prod', data_source: 'admin' }, consent },
  lead_created: { event: { name: 'lead_created', id: 'LEAD-2001' }, context: web('https://shop.example/contact'), user, consent },
  lead_qualified: { event: { name: 'lead_qualified', id: 'LEAD-2001', value: 500, currency: 'EUR' }, context: { environment: 'prod', data_source: 'crm' }, user, consent },
  lead_closed: { event: { name: 'lead_closed', id: 'LEAD-2001', properties: { outcome: 'lost' } }, context: { environment: 'prod', data_source: 'crm' }, user, consent },
  cart_viewed: { event: { name: 'cart_viewed', value: 114.8, currency: 'EUR' }, context: { ...web('https://shop.example/cart'), page_type: 'cart' }, products: [shirt, mug], consent, cookies },
  product_viewed: { event: { name: 'product_viewed', value: 49.9, currency: 'EUR' }, context: web('https://shop.example/p/linen-shirt'), products: [{ ...shirt, quantity: 1 }], consent },
  product_added_to_cart: { event: { name: 'product_added_to_cart', value: 99.8, currency: 'EUR' }, context: web('https://shop.example/p/linen-shirt'), products: [shirt], consent },
  // No marketing consent: the webhook has no consent category unless one is configured.
  product_removed_from_cart: {
    event: { name: 'product_removed_from_cart', value: 15, currency: 'EUR' },
    context: web('https://shop.example/cart'),
    products: [mug],
    consent: { analytics: false, personalization: false, marketing: false },
  },
};

// ---- expected `data` (the normalised event) ------------------------------------------------
const CONSENT = { analytics: true, personalization: true, marketing: true };
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
// Identifiers are hashed by default: e-mail lower-cased and trimmed, phone in E.164.
const USER = { id: 'CUST-881', sha256_email: sha256('jane.doe@example.com'), sha256_phone: sha256('+40722123456'), country: 'ro' };
const WEB_CONTEXT = (url: string) => ({ environment: 'prod', data_source: 'website', user_agent: UA, overide_ip: '198.51.100.4', url });
const SHIRT = { id: 'SKU-RED-M', parent_id: 'SKU-RED', name: 'Linen Shirt Red M', parent_name: 'Linen Shirt', price_base: 59.9, price: 49.9, tax_included: true, tax_percent: 19, quantity: 2, category: 'Shirts', brand: 'Acme', type: 'variable', stock_status: true };
// parent_name defaults to name; the stock_status string becomes a boolean.
const MUG = { id: 'SKU-MUG', parent_id: 'SKU-MUG', name: 'Coffee Mug', parent_name: 'Coffee Mug', price_base: 15, price: 15, tax_included: true, tax_percent: 19, quantity: 1, category: 'Kitchen', type: 'simple', stock_status: true };
const NONE = { products: [], shipping: [], payments: [], coupons: [] };
const GA = [{ name: '_ga', value: 'GA1.1.123456789.1712345678' }];

const EXPECTED: Record<string, { id: string; data: Record<string, unknown> }> = {
  checkout_completed: {
    id: 'ORD-10045',
    data: {
      event: { name: 'checkout_completed', value: 134.85, currency: 'EUR', exchange_rate: 1, id: 'ORD-10045', properties: { channel: 'web' } },
      context: WEB_CONTEXT('https://shop.example/checkout/thank-you'),
      products: [SHIRT, MUG],
      shipping: [{ name: 'Courier', value: 20.05, tax_included: true, tax_percent: 19 }],
      payments: [{ name: 'Card', value: 134.85, type: 'card' }],
      coupons: [{ name: 'WELCOME10', value: 0 }],
      user: USER, consent: CONSENT, cookies: GA,
    },
  },
  order_canceled: {
    id: 'ORD-10045',
    data: { event: { name: 'order_canceled', id: 'ORD-10045', exchange_rate: 1 }, context: { environment: 'prod', data_source: 'admin', url: 'https://shop.example' }, ...NONE, user: {}, consent: CONSENT, cookies: [] },
  },
  lead_created: {
    id: 'LEAD-2001',
    data: { event: { name: 'lead_created', id: 'LEAD-2001', exchange_rate: 1 }, context: WEB_CONTEXT('https://shop.example/contact'), ...NONE, user: USER, consent: CONSENT, cookies: [] },
  },
  lead_qualified: {
    id: 'LEAD-2001',
    data: { event: { name: 'lead_qualified', id: 'LEAD-2001', value: 500, currency: 'EUR', exchange_rate: 1 }, context: { environment: 'prod', data_source: 'crm', url: 'https://shop.example' }, ...NONE, user: USER, consent: CONSENT, cookies: [] },
  },
  lead_closed: {
    id: 'LEAD-2001',
    data: { event: { name: 'lead_closed', id: 'LEAD-2001', exchange_rate: 1, properties: { outcome: 'lost' } }, context: { environment: 'prod', data_source: 'crm', url: 'https://shop.example' }, ...NONE, user: USER, consent: CONSENT, cookies: [] },
  },
  cart_viewed: {
    id: 'tl_cart_1',
    data: { event: { name: 'cart_viewed', value: 114.8, currency: 'EUR', exchange_rate: 1 }, context: { ...WEB_CONTEXT('https://shop.example/cart'), page_type: 'cart' }, ...NONE, products: [SHIRT, MUG], user: {}, consent: CONSENT, cookies: GA },
  },
  product_viewed: {
    id: 'tl_view_1',
    data: { event: { name: 'product_viewed', value: 49.9, currency: 'EUR', exchange_rate: 1 }, context: WEB_CONTEXT('https://shop.example/p/linen-shirt'), ...NONE, products: [{ ...SHIRT, quantity: 1 }], user: {}, consent: CONSENT, cookies: [] },
  },
  product_added_to_cart: {
    id: 'tl_add_1',
    data: { event: { name: 'product_added_to_cart', value: 99.8, currency: 'EUR', exchange_rate: 1 }, context: WEB_CONTEXT('https://shop.example/p/linen-shirt'), ...NONE, products: [SHIRT], user: {}, consent: CONSENT, cookies: [] },
  },
  product_removed_from_cart: {
    id: 'tl_remove_1',
    data: {
      event: { name: 'product_removed_from_cart', value: 15, currency: 'EUR', exchange_rate: 1 }, context: WEB_CONTEXT('https://shop.example/cart'), ...NONE, products: [MUG], user: {},
      consent: { analytics: false, personalization: false, marketing: false }, cookies: [],
    },
  },
};

// ---- harness ---------------------------------------------------------------------------
const { run } = goldenHarness({
  plugin, destination: { id: 'dst_hook', name: 'Our backend' }, account: ACCOUNT, settings: SETTINGS, receivedAt: RECEIVED, now: NOW,
});

/** tracklane's message id, as the README documents it: msg_ + 32 hex of SHA-256 over the NUL-terminated parts. */
function expectedMessageId(name: string, eventId: string): string {
  const parts = [ACCOUNT.scriptId, name, eventId, 'dst_hook', 'webhook.event'];
  return `msg_${sha256(parts.map((p) => `${p}\u0000`).join('')).slice(0, 32)}`;
}

/** v1 signature over the exact bytes, computed here with node:crypto. */
function expectedSignature(id: string, timestamp: string, body: string): string {
  const key = Buffer.from('AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=', 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

describe('webhook golden: payload → validateEvent → rules → signed request', () => {
  for (const name of SPEC_EVENT_NAMES) {
    const expected = EXPECTED[name];
    it(`${name} → POST {type: "${name}", …}, signed`, () => {
      // Headers and body are checked below: the signature depends on the exact bytes.
      const req = expectOneRequest(run(PAYLOADS[name], expected.id), { url: 'https://hooks.example.com/tracklane', eventId: expected.id });
      const body = JSON.parse(req.body);
      expect(body).to.deep.equal({ type: name, id: expected.id, timestamp: '2025-10-09T08:53:20.123Z', data: expected.data });
      expect(Object.keys(body)).to.deep.equal(['type', 'id', 'timestamp', 'data']);
      expect(Object.keys(body.data)).to.deep.equal(['event', 'context', 'products', 'shipping', 'payments', 'coupons', 'user', 'consent', 'cookies']);
      expect(req.headers).to.deep.equal({
        'content-type': 'application/json',
        'webhook-id': expectedMessageId(name, expected.id),
        'webhook-timestamp': '1760000002',
        'webhook-signature': expectedSignature(expectedMessageId(name, expected.id), '1760000002', req.body),
      });
      expect(req.body).not.to.include('AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA');
    });
  }

  it('a configured consent_category gates the webhook like any destination', () => {
    expectSkipped(run(PAYLOADS.product_removed_from_cart, 'tl_remove_1', { ...SETTINGS, consent_category: 'marketing' }), 'consent');
  });

  it('lead_created L-7 and lead_qualified L-7 get different webhook-ids (a receiver deduplicating on it keeps both)', () => {
    const created = expectOneRequest(run({ ...PAYLOADS.lead_created, event: { name: 'lead_created', id: 'L-7' } }, 'L-7'), { url: SETTINGS.url, eventId: 'L-7' });
    const qualified = expectOneRequest(run({ ...PAYLOADS.lead_qualified, event: { name: 'lead_qualified', id: 'L-7', value: 500, currency: 'EUR' } }, 'L-7'),
      { url: SETTINGS.url, eventId: 'L-7' });
    expect(created.headers['webhook-id']).to.match(/^msg_[0-9a-f]{32}$/);
    expect(created.headers['webhook-id']).to.not.equal(qualified.headers['webhook-id']);
    expect(JSON.parse(created.body).id, 'the customer\'s id is in the body').to.equal('L-7');
  });

  it('a non-Latin-1, dotted or 128-character (the longest valid) event id never reaches a header', () => {
    for (const id of ['订单-1', 'x'.repeat(128), 'a.b.c']) {
      const req = expectOneRequest(run({ ...PAYLOADS.lead_created, event: { name: 'lead_created', id } }, id), { url: SETTINGS.url, eventId: id });
      expect(req.headers['webhook-id']).to.match(/^msg_[0-9a-f]{32}$/);
      expect(JSON.parse(req.body).id).to.equal(id);
    }
  });

  describe('identifiers', () => {
    const RAW = { id: 'CUST-881', email: 'jane.doe@example.com', phone: '+40722123456', country: 'RO' };
    const userOf = (payload: Record<string, unknown>, settings: Record<string, unknown>) =>
      JSON.parse(expectOneRequest(run(payload, 'LEAD-2001', { ...SETTINGS, ...settings }), { url: SETTINGS.url, eventId: 'LEAD-2001' }).body).data.user;

    it('are hashed by default', () => {
      expect(userOf(PAYLOADS.lead_created, {})).to.deep.equal(USER);
    });
    it('go as sent only with send_plaintext_identifiers and marketing consent not refused', () => {
      expect(userOf(PAYLOADS.lead_created, { send_plaintext_identifiers: true })).to.deep.equal(RAW);
      const refused = { ...PAYLOADS.lead_created, consent: { analytics: true, personalization: true, marketing: false } };
      expect(userOf(refused, { send_plaintext_identifiers: true }), 'marketing refused: hashed').to.deep.equal(USER);
    });
    it('a rule cannot put the plaintext user elsewhere under data.user', () => {
      const rules = [{ id: 'webhook.event', event: '*', output: { 'data.user': { var: 'user' }, 'data.user.email': { var: 'user.email' } } }];
      const r = run(PAYLOADS.lead_created, 'LEAD-2001', SETTINGS, rules);
      const body = JSON.parse(expectOneRequest(r, { url: SETTINGS.url, eventId: 'LEAD-2001' }).body);
      expect(body.data.user).to.deep.equal(USER);
      expect(JSON.stringify(body)).to.not.contain('jane.doe@example.com');
    });
  });
});

