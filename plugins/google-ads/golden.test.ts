// End to end through the real pipeline: payload → validateEvent → mapEventForDestination
// with the rules of the real rules/ directory → the exact Google Ads upload body.
// Expected bodies are literals; hashes were computed apart from tracklane with
// `node -e "crypto.createHash('sha256').update(VALUE).digest('hex')"`.
import { expect } from 'chai';
import type { MapResult } from 'tracklane/sdk';
import { expectOneRequest, expectReady, expectSkipped, goldenHarness } from 'tracklane/sdk/testing';
import googleAds from './index.ts';

const ACCOUNT = { scriptId: 'GOLD1234', country: 'RO', host: 'https://shop.example.com' };
const SETTINGS = {
  customer_id: '123-456-7890',
  developer_token: 'golden-dev-token',
  access_token: 'ya29.golden-access',
  login_customer_id: '111-222-3333',
  merchant_id: '556677',
  feed_country_code: 'RO',
  feed_language_code: 'ro',
  conversion_actions: {
    checkout_completed: '1001',
    cart_viewed: '1002',
    product_viewed: '1003',
    product_added_to_cart: '1004',
    product_removed_from_cart: 1005,
    lead_created: '1006',
    lead_qualified: '1007',
    lead_closed: '1008',
  },
  // The view and cart goldens below show the requests once the operator opts in.
  upload_view_conversions: true,
};
const BASE = 'https://googleads.googleapis.com/v26/customers/1234567890';
const HEADERS = {
  'content-type': 'application/json',
  authorization: 'Bearer ya29.golden-access',
  'developer-token': 'golden-dev-token',
  'login-customer-id': '1112223333',
};
const RECEIVED = 1_795_252_500_000; // 2026-11-21T09:15:00Z
const WHEN = '2026-11-21 09:15:00+00:00';
const ACTION = (id: string) => `customers/1234567890/conversionActions/${id}`;
const GRANTED = { adUserData: 'GRANTED' };

const H = {
  email_ana: 'ec2fec7969b33848f8274bc619e6e2338dff2672313e7c65fecc357575ad8417', // anapopescu@gmail.com
  phone_ana: 'bc4d7e7d07c12f4ef1c15e16cbdf0c19868e561bff2f2a5a14ba770f97220d67', // +40721234567
  email_ion: 'a9d861474a28a9186fcf58288831b08c9b81174b88c46e518203d75601fe8ec3', // ion.ionescu@example.com
  email_maria: '2bf26a4b222b621aa1d5442ca03dec657ee8b50bbe650ac5fb83ec3926fa9482', // maria.ionescu@example.ro
  phone_maria: '3ea316a4615bbca632bb464e7d68dab5cb567230c79b9fae4d3d17aa16cf87f6', // +40744555666
  phone_ion: '4dec362e17aec2a934c1c4a424f8e55745497e2b9d37ca0883ee2e18614ba06f', // +40722333444
};

const MUG = {
  id: 'MUG-1-W', parent_id: 'MUG-1', name: 'Mug, white', parent_name: 'Mug',
  price_base: 59.99, price: 49.99, tax_included: true, tax_percent: 9, quantity: 2, category: 'Kitchen', brand: 'Acme',
};
const CRM_CONTEXT = { environment: 'prod', data_source: 'crm' };
const MARIA = { id: 'crm-9001', email: 'Maria.Ionescu@example.ro', phone: '+40 744 555 666' };

const { run } = goldenHarness({
  plugin: googleAds, destination: { id: 'dst-ads', name: 'Google Ads' }, account: ACCOUNT, settings: SETTINGS, receivedAt: RECEIVED, now: RECEIVED + 1000,
});

function expectRequest(result: MapResult, eventId: string, service: string, expected: Record<string, unknown>): void {
  expectOneRequest(result, { url: `${BASE}:${service}`, headers: HEADERS, eventId, body: expected });
}

const clicks = (conversion: Record<string, unknown>) => ({ conversions: [conversion], partialFailure: true });

describe('google-ads golden: payload → pipeline → conversion upload body', () => {
  it('checkout_completed → click conversion with gclid, identifiers and cart data', () => {
    const payload = {
      event: { name: 'checkout_completed', id: 'ORD-2026-0042', value: 204.48, currency: 'RON' },
      context: {
        environment: 'prod', data_source: 'website', overide_ip: '2a02:2f0e:d10:9a00::1',
        url: 'https://shop.example.com/checkout/order-received/42',
        landing_url: 'https://shop.example.com/?gclid=Cj0KCQiA_golden123&utm_source=google',
      },
      products: [
        {
          id: 'TS-1001-BL-M', parent_id: 'TS-1001', name: 'Cotton T-shirt, blue, M', parent_name: 'Cotton T-shirt',
          price_base: 99.99, price: 79.99, tax_included: true, tax_percent: 19, quantity: 2, category: 'Clothing',
        },
        { id: 'EL-77', name: 'Wireless earbuds', price_base: 30.5, price: 30.5, tax_included: true, tax_percent: 19, quantity: 1, category: 'Electronics' },
      ],
      shipping: [{ name: 'Courier', value: 19.99 }, { name: 'Insurance', value: 4.01 }],
      coupons: [{ name: 'WELCOME10', value: 10 }, { name: 'FREESHIP', value: 0 }],
      user: { id: 'cust-42', email: ' Ana.Popescu@Gmail.com ', phone: '0721 234 567', first_name: 'Ana', country: 'RO' },
      consent: { analytics: true, personalization: true, marketing: true },
    };
    expectRequest(run(payload, 'ORD-2026-0042'), 'ORD-2026-0042', 'uploadClickConversions', clicks({
      gclid: 'Cj0KCQiA_golden123',
      conversionAction: ACTION('1001'),
      conversionDateTime: WHEN,
      conversionValue: 204.48,
      currencyCode: 'RON',
      orderId: 'ORD-2026-0042',
      userIdentifiers: [{ hashedEmail: H.email_ana }, { hashedPhoneNumber: H.phone_ana }],
      consent: GRANTED,
      cartData: {
        merchantId: '556677',
        feedCountryCode: 'RO',
        feedLanguageCode: 'ro',
        localTransactionCost: 10,
        items: [
          // Net of the 19 % VAT included in price: 79.99 / 1.19, 30.5 / 1.19.
          { productId: 'TS-1001-BL-M', quantity: 2, unitPrice: 67.22 },
          { productId: 'EL-77', quantity: 1, unitPrice: 25.63 },
        ],
      },
    }));
  });

  it('cartData is net of VAT: a price without tax stays as it is, a coupon\'s included tax comes off localTransactionCost', () => {
    const payload = {
      event: { name: 'checkout_completed', id: 'ORD-NET-1', value: 100, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'website', url: 'https://shop.example.com/thanks?gclid=Cj0_net' },
      products: [
        { id: 'NET-1', name: 'Net-priced', price_base: 50, price: 50, tax_included: false, tax_percent: 19, quantity: 1, category: 'A' },
        { id: 'GROSS-1', name: 'Gross-priced', price_base: 59.5, price: 59.5, tax_percent: 19, quantity: 1, category: 'A' },
      ],
      coupons: [{ name: 'TEN', value: 11.9, tax_percent: 19 }, { name: 'FLAT', value: 2 }],
      consent: { analytics: true, personalization: true, marketing: true },
    };
    const [req] = expectReady(run(payload, 'ORD-NET-1'));
    const cart = JSON.parse(req.body).conversions[0].cartData;
    expect(cart.items).to.deep.equal([
      { productId: 'NET-1', quantity: 1, unitPrice: 50 },
      { productId: 'GROSS-1', quantity: 1, unitPrice: 50 },
    ]);
    expect(cart.localTransactionCost, '11.9 / 1.19 + 2').to.equal(12);
  });

  it('order_canceled → RETRACTION of the checkout_completed conversion', () => {
    const payload = { event: { name: 'order_canceled', id: 'ORD-2026-0042' }, context: { environment: 'prod', data_source: 'admin' } };
    expectRequest(run(payload, 'ORD-2026-0042'), 'ORD-2026-0042', 'uploadConversionAdjustments', {
      conversionAdjustments: [{
        adjustmentType: 'RETRACTION',
        orderId: 'ORD-2026-0042',
        conversionAction: ACTION('1001'),
        adjustmentDateTime: WHEN,
      }],
      partialFailure: true,
    });
  });

  it('cart_viewed → click conversion with cart data, gclid from the _gcl_aw cookie', () => {
    const payload = {
      event: { name: 'cart_viewed', id: 'cart-7f3a', value: 229.97, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'website', url: 'https://shop.example.com/cart', page_type: 'cart' },
      products: [MUG, { id: 'LAMP-9', name: 'Desk lamp', price_base: 129.99, price: 129.99, tax_percent: 19, quantity: 1, category: 'Lighting' }],
      user: { email: 'ion.ionescu@example.com' },
      consent: { analytics: true, personalization: true, marketing: true },
      cookies: [{ name: '_gcl_aw', value: 'GCL.1795250000.EAIaIQobChMI_golden' }],
    };
    expectRequest(run(payload, 'cart-7f3a'), 'cart-7f3a', 'uploadClickConversions', clicks({
      gclid: 'EAIaIQobChMI_golden',
      conversionAction: ACTION('1002'),
      conversionDateTime: WHEN,
      conversionValue: 229.97,
      currencyCode: 'EUR',
      orderId: 'cart-7f3a',
      userIdentifiers: [{ hashedEmail: H.email_ion }],
      consent: GRANTED,
      cartData: {
        merchantId: '556677',
        feedCountryCode: 'RO',
        feedLanguageCode: 'ro',
        // Net prices: the mug's 9 % and the lamp's 19 % VAT taken out (tax_included defaults to true).
        items: [{ productId: 'MUG-1-W', quantity: 2, unitPrice: 45.86 }, { productId: 'LAMP-9', quantity: 1, unitPrice: 109.24 }],
      },
    }));
  });

  it('product_viewed → click conversion with the wbraid from the URL; no event.id, so orderId is tracklane\'s event id', () => {
    const payload = {
      event: { name: 'product_viewed', value: 49.99, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'website', url: 'https://shop.example.com/p/mug?wbraid=WBR_golden_1' },
      products: [{ ...MUG, quantity: 1 }],
    };
    expectRequest(run(payload, 'tl-view-1'), 'tl-view-1', 'uploadClickConversions', clicks({
      wbraid: 'WBR_golden_1',
      conversionAction: ACTION('1003'),
      conversionDateTime: WHEN,
      conversionValue: 49.99,
      currencyCode: 'EUR',
      orderId: 'tl-view-1',
      consent: GRANTED,
    }));
  });

  it('product_added_to_cart → click conversion with the gbraid from the landing URL and a phone', () => {
    const payload = {
      event: { name: 'product_added_to_cart', value: 99.98, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'app', landing_url: 'https://shop.example.com/?gbraid=GBR_golden_2' },
      products: [MUG],
      user: { phone: '0722 333 444' },
      consent: { analytics: false, personalization: false, marketing: true },
    };
    expectRequest(run(payload, 'tl-add-1'), 'tl-add-1', 'uploadClickConversions', clicks({
      gbraid: 'GBR_golden_2',
      conversionAction: ACTION('1004'),
      conversionDateTime: WHEN,
      conversionValue: 99.98,
      currencyCode: 'EUR',
      orderId: 'tl-add-1',
      userIdentifiers: [{ hashedPhoneNumber: H.phone_ion }],
      consent: GRANTED,
    }));
  });

  it('product_removed_from_cart → click conversion (integer action id in settings)', () => {
    const payload = {
      event: { name: 'product_removed_from_cart', value: 49.99, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'website', url: 'https://shop.example.com/cart?gclid=Cj0golden_rm' },
      products: [{ ...MUG, quantity: 1 }],
    };
    expectRequest(run(payload, 'tl-rm-1'), 'tl-rm-1', 'uploadClickConversions', clicks({
      gclid: 'Cj0golden_rm',
      conversionAction: ACTION('1005'),
      conversionDateTime: WHEN,
      conversionValue: 49.99,
      currencyCode: 'EUR',
      orderId: 'tl-rm-1',
      consent: GRANTED,
    }));
  });

  it('lead_created → enhanced conversion for leads: no click id, hashed e-mail and phone', () => {
    const payload = { event: { name: 'lead_created', id: 'LEAD-77' }, context: CRM_CONTEXT, user: MARIA };
    expectRequest(run(payload, 'LEAD-77'), 'LEAD-77', 'uploadClickConversions', clicks({
      conversionAction: ACTION('1006'),
      conversionDateTime: WHEN,
      orderId: 'LEAD-77',
      userIdentifiers: [{ hashedEmail: H.email_maria }, { hashedPhoneNumber: H.phone_maria }],
      consent: GRANTED,
    }));
  });

  it('lead_qualified → its own conversion action, with value', () => {
    const payload = { event: { name: 'lead_qualified', id: 'LEAD-77', value: 500, currency: 'EUR' }, context: CRM_CONTEXT, user: { email: MARIA.email } };
    expectRequest(run(payload, 'LEAD-77'), 'LEAD-77', 'uploadClickConversions', clicks({
      conversionAction: ACTION('1007'),
      conversionDateTime: WHEN,
      conversionValue: 500,
      currencyCode: 'EUR',
      orderId: 'LEAD-77',
      userIdentifiers: [{ hashedEmail: H.email_maria }],
      consent: GRANTED,
    }));
  });

  it('lead_closed → converted-lead conversion', () => {
    const payload = {
      event: { name: 'lead_closed', id: 'LEAD-77', value: 1200, currency: 'EUR' },
      context: CRM_CONTEXT,
      user: MARIA,
      consent: { analytics: true, personalization: false, marketing: true },
    };
    expectRequest(run(payload, 'LEAD-77'), 'LEAD-77', 'uploadClickConversions', clicks({
      conversionAction: ACTION('1008'),
      conversionDateTime: WHEN,
      conversionValue: 1200,
      currencyCode: 'EUR',
      orderId: 'LEAD-77',
      userIdentifiers: [{ hashedEmail: H.email_maria }, { hashedPhoneNumber: H.phone_maria }],
      consent: GRANTED,
    }));
  });

  it('views and cart events are not conversions by default, even when mapped; opted in, the preview warns', () => {
    const { upload_view_conversions: _opt, ...defaults } = SETTINGS;
    const payload = {
      event: { name: 'cart_viewed', value: 99.98, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'website', url: 'https://shop.example.com/cart?gclid=Cj0golden_cart' },
      products: [MUG],
    };
    expectSkipped(run(payload, 'cart-default', defaults), 'condition_not_met');
    const opted = run(payload, 'cart-opted');
    expectReady(opted);
    expect(opted.warnings).to.include('google-ads: cart_viewed is uploaded as a conversion (upload_view_conversions): make its conversion action secondary in Google Ads, or it inflates conversions and bidding');
    const purchase = run({ ...payload, event: { name: 'checkout_completed', id: 'ORD-P', value: 99.98, currency: 'EUR' } }, 'ORD-P', defaults);
    expect(purchase.status, 'purchases need no opt-in').to.equal('ready');
    expect(purchase.warnings.join('\n')).to.not.contain('uploaded as a conversion');
  });

  it('no cartData without merchant_id', () => {
    const { merchant_id: _m, ...noMerchant } = SETTINGS;
    const payload = {
      event: { name: 'cart_viewed', value: 99.98, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'website', url: 'https://shop.example.com/cart?gclid=Cj0golden_cart' },
      products: [MUG],
    };
    expectRequest(run(payload, 'tl-cart-2', noMerchant), 'tl-cart-2', 'uploadClickConversions', clicks({
      gclid: 'Cj0golden_cart',
      conversionAction: ACTION('1002'),
      conversionDateTime: WHEN,
      conversionValue: 99.98,
      currencyCode: 'EUR',
      orderId: 'tl-cart-2',
      consent: GRANTED,
    }));
  });

  it('an event without a configured conversion action: condition_not_met', () => {
    const payload = {
      event: { name: 'product_viewed', value: 49.99, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'website', url: 'https://shop.example.com/p/mug?gclid=Cj0x' },
      products: [MUG],
    };
    expectSkipped(run(payload, 'tl-view-2', { ...SETTINGS, conversion_actions: { checkout_completed: '1001' } }), 'condition_not_met');
  });

  it('order_canceled without a checkout_completed action: condition_not_met', () => {
    const payload = { event: { name: 'order_canceled', id: 'ORD-1' }, context: { environment: 'prod' } };
    expectSkipped(run(payload, 'ORD-1', { ...SETTINGS, conversion_actions: { lead_created: '1006' } }), 'condition_not_met');
  });

  it('a lead with neither a click id nor an e-mail or phone: condition_not_met', () => {
    const payload = { event: { name: 'lead_created', id: 'LEAD-80' }, context: CRM_CONTEXT, user: { id: 'crm-1' } };
    expectSkipped(run(payload, 'LEAD-80'), 'condition_not_met');
  });

  it('marketing consent refused: nothing sent', () => {
    const payload = { event: { name: 'lead_created', id: 'LEAD-81' }, context: CRM_CONTEXT, user: MARIA, consent: { analytics: true, personalization: true, marketing: false } };
    expectSkipped(run(payload, 'LEAD-81'), 'consent');
  });
});
