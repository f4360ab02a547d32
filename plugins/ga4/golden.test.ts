// End to end through the real pipeline: payload → validateEvent → mapEventForDestination
// with the rules of the real rules/ directory → the exact Measurement Protocol body.
// Expected bodies are literals; hashes were computed apart from tracklane with
// `node -e "crypto.createHash('sha256').update(VALUE).digest('hex')"`.
import { expect } from 'chai';
import { expectReady, expectSkipped } from 'tracklane/sdk/testing';
import { cut, limitEvent } from './limits.ts';
import { HOST_URL, MICROS, UA, GA, GA_SESSION, CLIENT_ID, SESSION_ID, DERIVED_CLIENT_ID, H, MUG, MUG_ITEM, expectBody, ga4Golden } from './golden-fixtures.ts';

const { run } = ga4Golden();

describe('ga4 golden: payload → pipeline → Measurement Protocol body', () => {
  it('checkout_completed → purchase with items, shipping, coupon, tax, page_location, page_referrer, user properties, user_data, consent, time and session', () => {
    const payload = {
      event: { name: 'checkout_completed', id: 'ORD-2026-0042', value: 204.48, currency: 'RON', properties: { tax: 32.65, store: 'ro-main' } },
      context: {
        environment: 'prod', data_source: 'website', user_agent: UA, overide_ip: '2a02:2f0e:d10:9a00::1',
        url: 'https://shop.example.com/checkout/order-received/42', page_type: 'checkout',
        referrer_url: 'https://www.google.com/', landing_url: 'https://shop.example.com/?utm_source=google',
      },
      products: [
        {
          id: 'TS-1001-BL-M', parent_id: 'TS-1001', name: 'Cotton T-shirt, blue, M', parent_name: 'Cotton T-shirt',
          price_base: 99.99, price: 79.99, tax_included: true, tax_percent: 19, quantity: 2, category: 'Clothing', brand: 'Acme',
          coupons: [{ name: 'SUMMER20', value: 20 }],
        },
        { id: 'EL-77', name: 'Wireless earbuds', price_base: 30.5, price: 30.5, tax_included: true, tax_percent: 19, quantity: 1, category: 'Electronics', brand: 'Sonic' },
      ],
      shipping: [{ name: 'Courier', value: 19.99, type: 'standard' }, { name: 'Insurance', value: 4.01 }],
      payments: [{ name: 'Card', value: 204.48, type: 'card' }],
      coupons: [{ name: 'WELCOME10', value: 10, type: 'FIRST_ORDER' }, { name: 'FREESHIP', value: 0 }],
      user: {
        id: 'cust-42', email: ' Ana.Popescu@Gmail.com ', phone: '0721 234 567', first_name: 'Ana', last_name: 'Popescu',
        street: 'Str. Exemplu 1', city: 'București', region: 'Ilfov', postal_code: '010101', country: 'Romania',
        orders_total_number: 3, orders_canceled_number: 0, orders_total_value: 612.4, created_at: 1_700_000_000_000,
        properties: { loyalty_email: 'ana.popescu@gmail.com', tier: 'gold' },
      },
      consent: { analytics: true, personalization: true, marketing: true },
      cookies: [GA, GA_SESSION],
    };
    expectBody(run(payload, 'ORD-2026-0042'), 'ORD-2026-0042', {
      client_id: CLIENT_ID,
      user_id: 'cust-42',
      timestamp_micros: MICROS,
      user_properties: {
        orders_total_number: { value: 3 },
        orders_canceled_number: { value: 0 },
        orders_total_value: { value: 612.4 },
        customer_since: { value: '2023-11-14' },
      },
      user_data: {
        sha256_email_address: [H.email_ana],
        sha256_phone_number: [H.phone_ana],
        address: [{
          sha256_first_name: H.fn_ana, sha256_last_name: H.ln_popescu, sha256_street: H.street,
          city: 'bucurești', region: 'ilfov', postal_code: '010101', country: 'RO',
        }],
      },
      consent: { ad_user_data: 'GRANTED', ad_personalization: 'GRANTED' },
      ip_override: '2a02:2f0e:d10:9a00::1',
      user_agent: UA,
      events: [{
        name: 'purchase',
        params: {
          transaction_id: 'ORD-2026-0042',
          value: 204.48,
          currency: 'RON',
          tax: 32.65,
          shipping: 24,
          coupon: 'WELCOME10',
          items: [
            {
              item_id: 'TS-1001-BL-M', item_name: 'Cotton T-shirt', item_variant: 'Cotton T-shirt, blue, M', item_brand: 'Acme',
              item_category: 'Clothing', price: 79.99, quantity: 2, discount: 20, coupon: 'SUMMER20',
            },
            { item_id: 'EL-77', item_name: 'Wireless earbuds', item_brand: 'Sonic', item_category: 'Electronics', price: 30.5, quantity: 1 },
          ],
          page_location: 'https://shop.example.com/checkout/order-received/42',
          page_referrer: 'https://www.google.com/',
          session_id: SESSION_ID,
          engagement_time_msec: 1,
        },
      }],
    });
  });

  it('order_canceled → refund; consent denied: ad_user_data and ad_personalization DENIED, no user_data; no URL: the host as page_location', () => {
    const payload = {
      event: { name: 'order_canceled', id: 'ORD-2026-0042', value: 204.48, currency: 'RON' },
      context: { environment: 'prod', data_source: 'admin' },
      user: { id: 'cust-42', email: 'ana.popescu@gmail.com' },
      consent: { analytics: true, personalization: false, marketing: false },
      cookies: [GA],
    };
    expectBody(run(payload, 'ORD-2026-0042'), 'ORD-2026-0042', {
      client_id: CLIENT_ID,
      user_id: 'cust-42',
      timestamp_micros: MICROS,
      consent: { ad_user_data: 'DENIED', ad_personalization: 'DENIED' },
      events: [{ name: 'refund', params: { transaction_id: 'ORD-2026-0042', value: 204.48, currency: 'RON', page_location: HOST_URL } }],
    });
  });

  it('cart_viewed → view_cart with every line as an item; no referrer: page_location alone', () => {
    const payload = {
      event: { name: 'cart_viewed', value: 229.97, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'website', user_agent: UA, overide_ip: '203.0.113.7', url: 'https://shop.example.com/cart', page_type: 'cart' },
      products: [MUG, { id: 'LAMP-9', name: 'Desk lamp', price_base: 129.99, price: 129.99, tax_percent: 19, quantity: 1, category: 'Lighting' }],
      user: { email: 'ion.ionescu@example.com' },
      consent: { analytics: true, personalization: false, marketing: true },
      cookies: [GA, GA_SESSION],
    };
    expectBody(run(payload, 'tl-cart-1'), 'tl-cart-1', {
      client_id: CLIENT_ID,
      timestamp_micros: MICROS,
      user_data: { sha256_email_address: [H.email_ion] },
      consent: { ad_user_data: 'GRANTED', ad_personalization: 'DENIED' },
      ip_override: '203.0.113.7',
      user_agent: UA,
      events: [{
        name: 'view_cart',
        params: {
          value: 229.97,
          currency: 'EUR',
          items: [MUG_ITEM, { item_id: 'LAMP-9', item_name: 'Desk lamp', item_category: 'Lighting', price: 129.99, quantity: 1 }],
          page_location: 'https://shop.example.com/cart',
          session_id: SESSION_ID,
          engagement_time_msec: 1,
        },
      }],
    });
  });

  it('product_viewed → view_item (no consent object: all granted)', () => {
    const payload = {
      event: { name: 'product_viewed', value: 49.99, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'website', url: 'https://shop.example.com/p/mug?color=white' },
      products: [{ ...MUG, quantity: 1 }],
      cookies: [GA],
    };
    expectBody(run(payload, 'tl-view-1'), 'tl-view-1', {
      client_id: CLIENT_ID,
      timestamp_micros: MICROS,
      consent: { ad_user_data: 'GRANTED', ad_personalization: 'GRANTED' },
      events: [{
        name: 'view_item',
        params: { value: 49.99, currency: 'EUR', items: [{ ...MUG_ITEM, quantity: 1 }], page_location: 'https://shop.example.com/p/mug?color=white' },
      }],
    });
  });

  it('product_added_to_cart → add_to_cart', () => {
    const payload = {
      event: { name: 'product_added_to_cart', value: 99.98, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'website', user_agent: UA },
      products: [MUG],
      consent: { analytics: true, personalization: true, marketing: true },
      cookies: [GA, GA_SESSION],
    };
    expectBody(run(payload, 'tl-add-1'), 'tl-add-1', {
      client_id: CLIENT_ID,
      timestamp_micros: MICROS,
      consent: { ad_user_data: 'GRANTED', ad_personalization: 'GRANTED' },
      user_agent: UA,
      events: [{
        name: 'add_to_cart',
        params: { value: 99.98, currency: 'EUR', items: [MUG_ITEM], page_location: HOST_URL, session_id: SESSION_ID, engagement_time_msec: 1 },
      }],
    });
  });

  it('product_removed_from_cart → remove_from_cart', () => {
    const payload = {
      event: { name: 'product_removed_from_cart', value: 49.99, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'app' },
      products: [{ ...MUG, quantity: 1 }],
      consent: { analytics: true, personalization: true, marketing: true },
      cookies: [GA],
    };
    expectBody(run(payload, 'tl-rm-1'), 'tl-rm-1', {
      client_id: CLIENT_ID,
      timestamp_micros: MICROS,
      consent: { ad_user_data: 'GRANTED', ad_personalization: 'GRANTED' },
      events: [{ name: 'remove_from_cart', params: { value: 49.99, currency: 'EUR', items: [{ ...MUG_ITEM, quantity: 1 }], page_location: HOST_URL } }],
    });
  });

  it('lead_created → generate_lead from a CRM: client_id derived from the user, lead_source from properties', () => {
    const payload = {
      event: { name: 'lead_created', id: 'LEAD-77', properties: { lead_source: 'webinar' } },
      context: { environment: 'prod', data_source: 'crm' },
      user: { id: 'crm-9001', email: 'Maria.Ionescu@example.ro', phone: '+40 744 555 666' },
      consent: { analytics: true, personalization: true, marketing: true },
    };
    expectBody(run(payload, 'LEAD-77'), 'LEAD-77', {
      client_id: DERIVED_CLIENT_ID,
      user_id: 'crm-9001',
      timestamp_micros: MICROS,
      user_data: { sha256_email_address: [H.email_maria], sha256_phone_number: [H.phone_maria] },
      consent: { ad_user_data: 'GRANTED', ad_personalization: 'GRANTED' },
      events: [{ name: 'generate_lead', params: { lead_source: 'webinar', page_location: HOST_URL } }],
    });
  });

  it('lead_qualified → qualify_lead with value and currency', () => {
    const payload = {
      event: { name: 'lead_qualified', id: 'LEAD-77', value: 500, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'crm' },
      user: { id: 'crm-9001' },
    };
    expectBody(run(payload, 'LEAD-77'), 'LEAD-77', {
      client_id: DERIVED_CLIENT_ID,
      user_id: 'crm-9001',
      timestamp_micros: MICROS,
      consent: { ad_user_data: 'GRANTED', ad_personalization: 'GRANTED' },
      events: [{ name: 'qualify_lead', params: { value: 500, currency: 'EUR', page_location: HOST_URL } }],
    });
  });

  it('lead_closed → close_convert_lead', () => {
    const payload = {
      event: { name: 'lead_closed', id: 'LEAD-77', value: 1200, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'crm' },
      user: { id: 'crm-9001' },
      consent: { analytics: true, personalization: false, marketing: true },
      cookies: [GA],
    };
    expectBody(run(payload, 'LEAD-77'), 'LEAD-77', {
      client_id: CLIENT_ID,
      user_id: 'crm-9001',
      timestamp_micros: MICROS,
      consent: { ad_user_data: 'GRANTED', ad_personalization: 'DENIED' },
      events: [{ name: 'close_convert_lead', params: { value: 1200, currency: 'EUR', page_location: HOST_URL } }],
    });
  });

  it('sends nothing without a client_id to send (no _ga cookie and no user): condition_not_met', () => {
    expectSkipped(run({ event: { name: 'lead_created', id: 'LEAD-78' }, context: { environment: 'prod', data_source: 'crm' } }, 'LEAD-78'), 'condition_not_met');
  });

  it('sends nothing when analytics consent is refused', () => {
    expectSkipped(run({
      event: { name: 'lead_created', id: 'LEAD-79' },
      context: { environment: 'prod', data_source: 'crm' },
      consent: { analytics: false, personalization: true, marketing: true },
      cookies: [GA],
    }, 'LEAD-79'), 'consent');
  });

  it('applies GA4 limits: a 150-character item_name and a 120-character item_category are cut to 100, a 300-character user id is left out, with warnings', () => {
    const longName = 'Ł'.repeat(149) + '😀'; // 150 characters, the last one a surrogate pair
    const payload = {
      event: { name: 'product_added_to_cart', value: 99.98, currency: 'EUR' },
      context: { environment: 'prod', data_source: 'website', user_agent: UA },
      products: [{ ...MUG, parent_name: longName, category: 'C'.repeat(120) }],
      user: { id: 'u'.repeat(300) },
      consent: { analytics: true, personalization: true, marketing: true },
      cookies: [GA, GA_SESSION],
    };
    const r = run(payload, 'tl-add-long');
    const [req] = expectReady(r);
    const body = JSON.parse(req.body);
    const [item] = body.events[0].params.items;
    expect(Array.from(item.item_name as string)).to.have.length(100);
    expect(item.item_name).to.equal('Ł'.repeat(100));
    expect(item.item_category).to.equal('C'.repeat(100));
    expect(body).to.not.have.property('user_id');
    expect(r.warnings).to.include.members([
      'ga4: items[].item_name was longer than 100 characters and was cut',
      'ga4: items[].item_category was longer than 100 characters and was cut',
      'ga4: user_id longer than 256 characters was left out (a shortened id would name someone else)',
    ]);
  });

  it('cuts by characters, never inside a surrogate pair; keeps the longer page_location limit', () => {
    expect(cut('a😀b', 2)).to.equal('a😀');
    const { event, warnings } = limitEvent({ name: 'n'.repeat(41), params: { page_location: 'x'.repeat(1000), note: 'y'.repeat(101) } });
    expect(event.name).to.have.length(40);
    expect((event.params as Record<string, string>).page_location).to.have.length(1000);
    expect((event.params as Record<string, string>).note).to.have.length(100);
    expect(warnings).to.have.length(2);
    const many = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`p${i}`, i]));
    expect(Object.keys(limitEvent({ name: 'x', params: many }).event.params as object)).to.have.length(25);
  });
});

