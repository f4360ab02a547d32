// Coupons (order-level and per product): the tax field comes spelled `tax_percent` or, as in
// the payload reference's general section, `tax_precent`, as a number or a numeric string. Both are read,
// and normalised to the number `tax_percent`.
import { parseNumericString } from '../formats.ts';
import { dropNulls, isRecord, upperCaseCurrency, type JsonObject } from '../guards.ts';
import type { Coupon } from '../types.ts';
import { fail, warnUndefinedMembers, type RuleContext } from './rule-context.ts';

const COUPON_MEMBERS = [
  'value', 'tax_included', 'tax_percent', 'tax_precent', 'id', 'type', 'currency', 'exchange_rate',
] as const;
const UNDEFINED_IN_SPEC = ['code'] as const;
const TAX_MIN = 0;
const TAX_MAX = 100;

/** Normalises each coupon object of `raw` in place; `path` is e.g. `coupons` or `products[0].coupons`. */
export function normaliseCoupons(raw: unknown, path: string, rc: RuleContext): Coupon[] {
  if (!Array.isArray(raw)) return [];
  for (let i = 0; i < raw.length; i++) {
    const c: unknown = raw[i];
    if (isRecord(c)) normaliseCoupon(c, `${path}[${i}]`, rc);
  }
  return raw as Coupon[];
}

function normaliseCoupon(c: JsonObject, path: string, rc: RuleContext): void {
  dropNulls(c, COUPON_MEMBERS);
  upperCaseCurrency(c);
  const percent = readTax(c, 'tax_percent', path, rc);
  const precent = readTax(c, 'tax_precent', path, rc);
  if (percent !== undefined && precent !== undefined && percent !== precent) {
    fail(rc, `${path}.tax_precent`, 'INCONSISTENT_VALUE',
      `${path}.tax_precent (${precent}) contradicts ${path}.tax_percent (${percent}); send only one of them`);
  }
  const tax = percent ?? precent;
  if (tax !== undefined) c.tax_percent = tax;
  delete c.tax_precent;
  warnUndefinedMembers(rc, c, path, UNDEFINED_IN_SPEC);
}

/** The tax as a number, or undefined when absent or invalid (the schema reports type errors). */
function readTax(c: JsonObject, member: string, path: string, rc: RuleContext): number | undefined {
  const v = c[member];
  if (typeof v === 'number') return v; // range checked by the schema
  if (typeof v !== 'string') return undefined;
  const n = parseNumericString(v);
  if (n === null) return undefined;
  if (n < TAX_MIN || n > TAX_MAX) {
    fail(rc, `${path}.${member}`, 'OUT_OF_RANGE', `${path}.${member} must be between ${TAX_MIN} and ${TAX_MAX}, got ${n}`);
    return undefined;
  }
  return n;
}
