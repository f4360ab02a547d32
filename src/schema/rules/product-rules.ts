// Products: price consistency, the documented defaults (parent_* from the product, tax_included,
// quantity, type, stock_status), and tax_percent, whose absence is tolerated: on cart_viewed
// the payload reference says the site's default rate applies; elsewhere the payload reference calls it required, but
// refusing an order for it loses the conversion, so it becomes null with a warning instead.
import { parseTimestamp } from '../formats.ts';
import { dropNulls, isRecord, upperCaseCurrency, type JsonObject } from '../guards.ts';
import { parseStockStatus } from '../stock-status.ts';
import type { Product } from '../types.ts';
import { normaliseCoupons } from './coupon-rules.ts';
import { fail, warn, warnUndefinedMembers, type RuleContext } from './rule-context.ts';

const PRODUCT_MEMBERS = [
  'id', 'parent_id', 'name', 'parent_name', 'price_base', 'price', 'tax_included', 'tax_percent',
  'quantity', 'category', 'sku', 'parent_sku', 'gtin', 'mpn', 'ean', 'brand', 'type', 'stock_status',
  'stock_location', 'created_at', 'url', 'parent_url', 'image', 'images', 'categories', 'coupons',
  'properties', 'currency', 'exchange_rate',
] as const;
const UNDEFINED_IN_SPEC = ['image_url', 'description', 'tags'] as const;

/** Normalises each product object of `raw` in place. */
export function normaliseProducts(raw: unknown, rc: RuleContext): Product[] {
  if (!Array.isArray(raw)) return [];
  for (let i = 0; i < raw.length; i++) {
    const p: unknown = raw[i];
    if (isRecord(p)) normaliseProduct(p, `products[${i}]`, rc);
  }
  return raw as Product[];
}

function normaliseProduct(p: JsonObject, path: string, rc: RuleContext): void {
  dropNulls(p, PRODUCT_MEMBERS);
  const { price, price_base: base } = p;
  if (typeof price === 'number' && typeof base === 'number' && price >= 0 && base >= 0 && price > base) {
    fail(rc, `${path}.price`, 'INCONSISTENT_VALUE',
      `${path}.price (${price}) is greater than ${path}.price_base (${base}); price is after discounts, so it can never exceed price_base`);
  }
  if (p.parent_id === undefined && typeof p.id === 'string') p.parent_id = p.id;
  if (p.parent_name === undefined && typeof p.name === 'string') p.parent_name = p.name;
  if (p.parent_sku === undefined && typeof p.sku === 'string') p.parent_sku = p.sku;
  if (p.tax_included === undefined) p.tax_included = true;
  if (p.quantity === undefined) p.quantity = 1;
  if (p.type === undefined) p.type = 'simple';
  p.stock_status = parseStockStatus(p.stock_status);
  if (typeof p.created_at === 'string') p.created_at = parseTimestamp(p.created_at) ?? p.created_at;
  upperCaseCurrency(p);
  if (p.tax_percent === undefined) defaultTaxPercent(p, path, rc);
  if (rc.cart && p.category === undefined) {
    warn(rc, `${path}.category`, 'RECOMMENDED_FIELD_MISSING',
      `${path}.category is missing; it is recommended so destinations can report on categories`);
  }
  warnUndefinedMembers(rc, p, path, UNDEFINED_IN_SPEC);
  if (p.coupons !== undefined) normaliseCoupons(p.coupons, `${path}.coupons`, rc);
}

function defaultTaxPercent(p: JsonObject, path: string, rc: RuleContext): void {
  const rate = rc.cart ? rc.account.defaultTaxRate : null;
  p.tax_percent = rate;
  if (rate !== null) {
    warn(rc, `${path}.tax_percent`, 'DEFAULT_APPLIED',
      `${path}.tax_percent is missing; the account's default tax rate ${rate}% is used`);
  } else if (rc.cart) {
    warn(rc, `${path}.tax_percent`, 'RECOMMENDED_FIELD_MISSING',
      `${path}.tax_percent is missing and the account has no default tax rate, so the tax is recorded as unknown (null)`);
  } else {
    warn(rc, `${path}.tax_percent`, 'RECOMMENDED_FIELD_MISSING',
      `${path}.tax_percent is missing; the payload reference requires it, so the event is accepted with the tax recorded as unknown (null)`);
  }
}
