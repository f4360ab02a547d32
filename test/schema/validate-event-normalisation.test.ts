// What validateEvent hands the pipeline: defaults applied, aliases folded, consent resolved,
// cart_viewed fallbacks, and the caller's body left exactly as received.
import { expect } from 'chai';
import { validateEvent } from '../../src/schema/index.ts';
import type { NormalizedEvent } from '../../src/schema/types.ts';
import {
  ACCEPTED_EDGE_CASES,
  FULL_CART_VIEWED,
  FULL_CHECKOUT_COMPLETED,
  INVALID_CASES,
  MINIMAL_CART_VIEWED,
  MINIMAL_CHECKOUT_COMPLETED,
  MINIMAL_LEAD_CREATED,
  MINIMAL_ORDER_CANCELED,
  MINIMAL_PRODUCT_VIEWED,
  VALID_PAYLOADS,
  WARNING_CASES,
} from './fixtures.ts';
import { REMOVE, variant } from './variant.ts';
import { HOST, account } from './context.ts';

function normalise(body: unknown, ctx = account()): NormalizedEvent {
  const r = validateEvent(body, ctx);
  expect(r.errors, JSON.stringify(r.errors)).to.deep.equal([]);
  return r.event as NormalizedEvent;
}
const warningsOf = (body: unknown, ctx = account()) =>
  validateEvent(body, ctx).warnings.map((w) => ({ field: w.field, code: w.code }));

describe('validateEvent normalisation', () => {
  it('applies the product defaults the payload reference names', () => {
    const [p] = normalise(MINIMAL_PRODUCT_VIEWED).products;
    expect(p).to.deep.equal({
      id: 'MUG-1', parent_id: 'MUG-1', name: 'Mug', parent_name: 'Mug', price_base: 59.99, price: 49.99,
      category: 'Kitchen', tax_included: true, tax_percent: null, quantity: 1, type: 'simple', stock_status: true,
    });
  });

  it('keeps given values over defaults, and parent_sku follows sku', () => {
    const body = variant(MINIMAL_PRODUCT_VIEWED, ['products.0.sku', 'S-1'], ['products.0.tax_included', false],
      ['products.0.quantity', 3], ['products.0.type', 'bundle'], ['products.0.parent_id', 'P'], ['products.0.tax_percent', 5]);
    const [p] = normalise(body).products;
    expect(p).to.include({ parent_sku: 'S-1', tax_included: false, quantity: 3, type: 'bundle', parent_id: 'P', tax_percent: 5 });
  });

  it('defaults the event and the arrays', () => {
    const e = normalise(MINIMAL_ORDER_CANCELED);
    expect(e.event).to.deep.equal({ name: 'order_canceled', id: 'ORD-1001', exchange_rate: 1 });
    expect(e.context).to.deep.equal({ environment: 'prod', url: HOST });
    expect(e).to.include.keys('products', 'shipping', 'payments', 'coupons', 'cookies', 'consent');
    expect([e.products, e.shipping, e.payments, e.coupons, e.cookies]).to.deep.equal([[], [], [], [], []]);
    expect(e).to.not.have.property('user');
  });

  describe('stock_status', () => {
    const table: [unknown, boolean][] = [
      [undefined, true], [null, true], [true, true], [false, false], [5, true], [0.5, true], [0, false], [-1, false],
      ['in stock', true], ['yes', true], ['', true], ['-1', true], ['0', false], ['no', false], ['NU', false],
      ['False', false], [' out of stock ', false], ['Sold Out', false], ['unavailable', false],
      ['Indisponibil', false], ['fara stoc', false], ['Fără  stoc', false], ['stoc epuizat', false],
    ];
    for (const [input, expected] of table) {
      it(`${JSON.stringify(input) ?? 'absent'} → ${expected}`, () => {
        const body = variant(MINIMAL_PRODUCT_VIEWED, ['products.0.stock_status', input === undefined ? REMOVE : input]);
        expect(normalise(body).products[0].stock_status).to.equal(expected);
      });
    }
  });

  it('reads a coupon tax from tax_precent or tax_percent, number or numeric string', () => {
    const e = normalise(FULL_CHECKOUT_COMPLETED);
    expect(e.coupons[0]).to.include({ tax_percent: 19 }).and.not.have.property('tax_precent');
    expect(e.products[0].coupons?.[2]).to.include({ tax_percent: 19 }).and.not.have.property('tax_precent');
    const padded = variant(FULL_CHECKOUT_COMPLETED, ['coupons.0.tax_precent', REMOVE], ['coupons.0.tax_percent', ' 9.5 ']);
    expect(normalise(padded).coupons[0].tax_percent).to.equal(9.5);
  });

  it('folds override_ip into overide_ip', () => {
    const body = variant(MINIMAL_CHECKOUT_COMPLETED, ['context.override_ip', '2001:db8::7']);
    const { context } = normalise(body);
    expect(context.overide_ip).to.equal('2001:db8::7');
    expect(context).to.not.have.property('override_ip');
    const both = variant(FULL_CHECKOUT_COMPLETED, ['context.override_ip', '198.51.100.4']);
    expect(normalise(both).context.overide_ip).to.equal(FULL_CHECKOUT_COMPLETED.context.overide_ip);
  });

  describe('consent', () => {
    const ALL = { analytics: true, personalization: true, marketing: true };
    it('keeps a well-formed consent, refusals included', () => {
      expect(normalise(FULL_CHECKOUT_COMPLETED).consent).to.deep.equal({ analytics: true, personalization: false, marketing: true });
    });
    it('keeps the three values and drops extra members', () => {
      const body = variant(FULL_CHECKOUT_COMPLETED, ['consent.ad_storage', true]);
      expect(normalise(body).consent).to.deep.equal({ analytics: true, personalization: false, marketing: true });
    });
    for (const bad of [undefined, null, 'yes', [], {}, { analytics: true }, { analytics: 'yes', personalization: 1 }]) {
      it(`replaces ${JSON.stringify(bad) ?? 'absent'} with all true and warns: nothing in it is a refusal`, () => {
        const body = variant(FULL_CHECKOUT_COMPLETED, ['consent', bad === undefined ? REMOVE : bad]);
        expect(normalise(body).consent).to.deep.equal(ALL);
        expect(warningsOf(body)).to.deep.include({ field: 'consent', code: 'CONSENT_REPLACED' });
      });
    }
    const repaired: [unknown, object][] = [
      [{ analytics: false, marketing: false }, { analytics: false, personalization: false, marketing: false }],
      [{ analytics: true, marketing: false }, { analytics: true, personalization: false, marketing: false }],
      [{ analytics: true, personalization: true, marketing: 'no' }, { analytics: true, personalization: true, marketing: false }],
      [{ analytics: 'no', personalization: true, marketing: true }, { analytics: false, personalization: true, marketing: true }],
      [{ analytics: 1, personalization: 1, marketing: 0 }, { analytics: true, personalization: true, marketing: false }],
      [{ analytics: 'denied', personalization: 'maybe' }, { analytics: false, personalization: false, marketing: false }],
      [{ marketing: 'false', analytics: 'true' }, { analytics: true, personalization: false, marketing: false }],
      [false, { analytics: false, personalization: false, marketing: false }],
    ];
    for (const [given, expected] of repaired) {
      it(`never turns a refusal into a grant: ${JSON.stringify(given)}`, () => {
        const body = variant(FULL_CHECKOUT_COMPLETED, ['consent', given]);
        expect(normalise(body).consent).to.deep.equal(expected);
        expect(warningsOf(body)).to.deep.include({ field: 'consent', code: 'CONSENT_REPLACED' });
      });
    }
    it('says in the warning what was read and why a missing member is refused', () => {
      const body = variant(FULL_CHECKOUT_COMPLETED, ['consent', { analytics: true, marketing: false }]);
      const w = validateEvent(body, account()).warnings.find((x) => x.field === 'consent');
      expect(w?.message).to.include('consent.personalization is missing or not a boolean, so refused (false)');
    });
  });

  describe('context.url on every event', () => {
    for (const [name, body] of [['order_canceled', MINIMAL_ORDER_CANCELED], ['checkout_completed', MINIMAL_CHECKOUT_COMPLETED], ['lead_created', MINIMAL_LEAD_CREATED]] as const) {
      it(`${name}: a missing url falls back to the account host, with a URL_FALLBACK warning`, () => {
        const noUrl = variant(body, ['context.url', REMOVE]);
        expect(normalise(noUrl).context.url).to.equal(HOST);
        expect(warningsOf(noUrl)).to.deep.include({ field: 'context.url', code: 'URL_FALLBACK' });
        const none = account({ host: null });
        expect(normalise(noUrl, none).context).to.not.have.property('url');
        expect(validateEvent(noUrl, none).warnings.find((x) => x.field === 'context.url')?.message).to.include('no host');
      });
    }
    it('a given url is kept, without a warning', () => {
      const withUrl = variant(MINIMAL_ORDER_CANCELED, ['context.url', 'https://shop.example.com/orders/1']);
      expect(normalise(withUrl).context.url).to.equal('https://shop.example.com/orders/1');
      expect(warningsOf(withUrl).map((w) => w.field)).to.not.include('context.url');
    });
  });

  describe('cart_viewed', () => {
    it('falls back to the account host for a missing context.url', () => {
      expect(normalise(MINIMAL_CART_VIEWED).context).to.deep.equal({ environment: 'prod', url: HOST });
    });

    it('warns, and leaves url unset, when the account has no host', () => {
      const ctx = account({ host: null });
      expect(normalise(MINIMAL_CART_VIEWED, ctx).context).to.not.have.property('url');
      const w = validateEvent(MINIMAL_CART_VIEWED, ctx).warnings.find((x) => x.field === 'context.url');
      expect(w?.code).to.equal('URL_FALLBACK');
      expect(w?.message).to.include('no host');
    });

    it('keeps a given url and environment', () => {
      const e = normalise(variant(FULL_CART_VIEWED, ['context.environment', 'dev']));
      expect(e.context).to.include({ url: 'https://shop.example.com/cart', environment: 'dev' });
      expect(warningsOf(FULL_CART_VIEWED)).to.deep.equal([]);
    });

    it('uses the account default tax rate for a missing tax_percent', () => {
      const body = variant(FULL_CART_VIEWED, ['products.1.tax_percent', REMOVE]);
      expect(normalise(body, account({ defaultTaxRate: 9 })).products[1].tax_percent).to.equal(9);
      expect(warningsOf(body, account({ defaultTaxRate: 9 })))
        .to.deep.equal([{ field: 'products[1].tax_percent', code: 'DEFAULT_APPLIED' }]);
    });

    it('keeps tax_percent null with a warning when the account has no default rate', () => {
      const ctx = account({ defaultTaxRate: null });
      expect(normalise(MINIMAL_CART_VIEWED, ctx).products[0].tax_percent).to.equal(null);
      expect(warningsOf(MINIMAL_CART_VIEWED, ctx))
        .to.deep.include({ field: 'products[0].tax_percent', code: 'RECOMMENDED_FIELD_MISSING' });
    });

    it('never applies the default rate outside cart_viewed', () => {
      expect(normalise(MINIMAL_PRODUCT_VIEWED, account({ defaultTaxRate: 9 })).products[0].tax_percent).to.equal(null);
    });

    it('counts a missing quantity as 1 in the cart total', () => {
      expect(normalise(MINIMAL_CART_VIEWED).products[0].quantity).to.equal(1);
    });
  });

  it('drops null optional members, upper-cases currencies, converts string timestamps, trims contacts', () => {
    const body = variant(FULL_CHECKOUT_COMPLETED,
      ['event.currency', 'ron'], ['products.1.currency', 'eur'], ['products.0.brand', null], ['event.exchange_rate', null],
      ['products.0.created_at', '2023-09-01T00:00:00Z'], ['user.created_at', '1672531200000'],
      ['user.email', '  Ana@Example.com '], ['user.phone', ' +40 721 234 567 '], ['user.city', null]);
    const e = normalise(body);
    expect(e.event).to.include({ currency: 'RON', exchange_rate: 1 });
    expect(e.products[1].currency).to.equal('EUR');
    expect(e.products[0]).to.not.have.property('brand');
    expect(e.products[0].created_at).to.equal(Date.UTC(2023, 8, 1));
    expect(e.user).to.include({ created_at: 1672531200000, email: 'Ana@Example.com', phone: '+40 721 234 567' });
    expect(e.user).to.not.have.property('city');
  });

  it('passes unknown members of known objects through, and leaves top-level extras in the body only', () => {
    const body = variant(FULL_CHECKOUT_COMPLETED, ['source_system', 'erp'], ['event.timestamp', 1],
      ['products.0.margin', 12.5], ['products.0.image_url', 'https://cdn.example.com/x.jpg'], ['user.external_id', 'crm-1']);
    const e = normalise(body);
    expect(e).to.not.have.property('source_system');
    expect(e.event).to.have.property('timestamp', 1);
    expect(e.products[0]).to.include({ margin: 12.5, image_url: 'https://cdn.example.com/x.jpg' });
    expect(e.user).to.have.property('external_id', 'crm-1');
  });

  it('keeps the full checkout intact apart from the defaults', () => {
    const e = normalise(FULL_CHECKOUT_COMPLETED);
    expect(e.cookies).to.deep.equal(FULL_CHECKOUT_COMPLETED.cookies);
    expect(e.shipping).to.deep.equal(FULL_CHECKOUT_COMPLETED.shipping);
    expect(e.payments).to.deep.equal(FULL_CHECKOUT_COMPLETED.payments);
    expect(e.event).to.deep.equal(FULL_CHECKOUT_COMPLETED.event);
    expect(e.products[1]).to.include({ parent_id: 'EL-77', parent_name: 'Wireless earbuds', stock_status: true, exchange_rate: 4.97 });
  });

  describe('the input body', () => {
    const ctx = account();
    const bodies = [
      ...VALID_PAYLOADS.map((c) => c.body),
      ...INVALID_CASES.map((c) => c.body),
      ...WARNING_CASES.map((c) => c.body),
      ...ACCEPTED_EDGE_CASES.map((c) => c.body),
    ];
    it(`is never modified (${bodies.length} payloads)`, () => {
      for (const body of bodies) {
        const before = structuredClone(body);
        validateEvent(body, ctx);
        expect(body).to.deep.equal(before);
      }
    });

    it('shares no object with the normalised event', () => {
      const body = structuredClone(FULL_CHECKOUT_COMPLETED);
      const e = normalise(body);
      e.products[0].properties!.color = 'red';
      e.user!.email = 'x@example.com';
      e.cookies.push({ name: 'x', value: 'y' });
      expect(body).to.deep.equal(FULL_CHECKOUT_COMPLETED);
    });
  });
});
