// Payloads that must be accepted: WARNING_CASES each carry the warning they must produce;
// ACCEPTED_EDGE_CASES probe the lenient edges (nulls, case, hashes, string forms) and must
// simply produce no error. Plain data; the HTTP integration test runs the same tables.
import type { WarningCode } from '../../src/schema/types.ts';
import {
  FULL_CART_VIEWED as CART,
  FULL_CHECKOUT_COMPLETED as CO,
  MINIMAL_CART_VIEWED as MIN_CART,
  MINIMAL_CHECKOUT_COMPLETED as MIN_CO,
  MINIMAL_LEAD_CREATED,
  MINIMAL_ORDER_CANCELED as MIN_OC,
  MINIMAL_PRODUCT_VIEWED as MIN_VIEWED,
} from './payloads.ts';
import { REMOVE, variant, type Edit } from './variant.ts';

export interface WarningCase {
  name: string;
  body: unknown;
  warningField: string;
  warningCode: WarningCode;
}

export interface AcceptedCase {
  name: string;
  body: unknown;
}

const warned = (name: string, base: unknown, warningField: string, warningCode: WarningCode, ...edits: Edit[]): WarningCase =>
  ({ name, body: variant(base, ...edits), warningField, warningCode });

const ok = (name: string, base: unknown, ...edits: Edit[]): AcceptedCase => ({ name, body: variant(base, ...edits) });

export const WARNING_CASES: WarningCase[] = [
  warned('cart_viewed without context', MIN_CART, 'context', 'DEFAULT_APPLIED'),
  warned('cart_viewed without context.environment', CART, 'context.environment', 'DEFAULT_APPLIED', ['context.environment', REMOVE]),
  warned('cart_viewed with context.environment null', CART, 'context.environment', 'DEFAULT_APPLIED', ['context.environment', null]),
  warned('cart_viewed without context.url', CART, 'context.url', 'URL_FALLBACK', ['context.url', REMOVE]),
  warned('minimal cart_viewed falls back for the url', MIN_CART, 'context.url', 'URL_FALLBACK'),
  warned('order_canceled without data_source', MIN_OC, 'context.data_source', 'RECOMMENDED_FIELD_MISSING'),
  warned('data_source naming a marketplace', MIN_CO, 'context.data_source', 'UNKNOWN_VALUE', ['context.data_source', 'emag']),
  warned('data_source unknown', MINIMAL_LEAD_CREATED, 'context.data_source', 'UNKNOWN_VALUE', ['context.data_source', 'pos-terminal']),
  warned('override_ip instead of overide_ip', MIN_CO, 'context.override_ip', 'FIELD_RENAMED', ['context.override_ip', '198.51.100.4']),
  warned('override_ip next to overide_ip', CO, 'context.override_ip', 'FIELD_RENAMED', ['context.override_ip', '198.51.100.4']),
  warned('consent missing', MIN_CO, 'consent', 'CONSENT_REPLACED'),
  warned('consent null', CO, 'consent', 'CONSENT_REPLACED', ['consent', null]),
  warned('consent a string', CO, 'consent', 'CONSENT_REPLACED', ['consent', 'granted']),
  warned('consent an array', CO, 'consent', 'CONSENT_REPLACED', ['consent', [true, true, true]]),
  warned('consent missing a member', CO, 'consent', 'CONSENT_REPLACED', ['consent', { analytics: true, marketing: false }]),
  warned('consent with string values', CO, 'consent', 'CONSENT_REPLACED',
    ['consent', { analytics: 'yes', personalization: 'yes', marketing: 'no' }]),
  warned('consent with 0/1 values', CO, 'consent', 'CONSENT_REPLACED', ['consent', { analytics: 1, personalization: 1, marketing: 0 }]),
  warned('consent with an extra member', CO, 'consent.ad_storage', 'UNDEFINED_FIELD', ['consent.ad_storage', false]),
  warned('product image_url', CO, 'products[0].image_url', 'UNDEFINED_FIELD', ['products.0.image_url', 'https://cdn.example.com/a.jpg']),
  warned('product description', CO, 'products[1].description', 'UNDEFINED_FIELD', ['products.1.description', 'In-ear, 24h battery']),
  warned('product tags', CART, 'products[0].tags', 'UNDEFINED_FIELD', ['products.0.tags', ['gift', 'white']]),
  warned('order coupon code', CO, 'coupons[0].code', 'UNDEFINED_FIELD', ['coupons.0.code', 'WELCOME10']),
  warned('product coupon code', CO, 'products[0].coupons[1].code', 'UNDEFINED_FIELD', ['products.0.coupons.1.code', 'LOYAL5']),
  warned('user external_id', CO, 'user.external_id', 'UNDEFINED_FIELD', ['user.external_id', 'crm-991']),
  warned('cart_viewed product without category', MIN_CART, 'products[0].category', 'RECOMMENDED_FIELD_MISSING'),
  warned('checkout_completed product without tax_percent', CO, 'products[0].tax_percent', 'RECOMMENDED_FIELD_MISSING',
    ['products.0.tax_percent', REMOVE]),
  warned('product_viewed product without tax_percent', MIN_VIEWED, 'products[0].tax_percent', 'RECOMMENDED_FIELD_MISSING'),
];

const SHA256 = 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9';

export const ACCEPTED_EDGE_CASES: AcceptedCase[] = [
  ok('optional members null', CO,
    ['event.exchange_rate', null], ['event.properties', null], ['context.user_agent', null], ['context.data_source', null],
    ['products.0.brand', null], ['products.0.quantity', null], ['products.0.stock_status', null], ['products.0.parent_id', null],
    ['shipping', null], ['payments', null], ['coupons', null], ['cookies', null], ['user.email', null], ['user.properties', null]),
  ok('user null', CO, ['user', null]),
  ok('cart_viewed with context null', MIN_CART, ['context', null]),
  ok('lower-case currency', MIN_CO, ['event.currency', 'eur']),
  ok('value zero', MIN_CO, ['event.value', 0]),
  ok('hashed e-mail and phone outside cart_viewed', CO, ['user.email', SHA256], ['user.phone', SHA256.toUpperCase()]),
  ok('e-mail with surrounding spaces', CO, ['user.email', '  Ana.Popescu@Example.com ']),
  ok('phone with dots, dashes and parentheses', CO, ['user.phone', '(+40) 721-234.567']),
  ok('national phone number', CO, ['user.phone', '0721234567']),
  ok('stock_status "out of stock"', CO, ['products.0.stock_status', 'Out Of Stock']),
  ok('stock_status 0', CO, ['products.0.stock_status', 0]),
  ok('created_at as an ISO date string', CO, ['products.0.created_at', '2023-09-01T00:00:00Z']),
  ok('created_at as a digit string', CO, ['user.created_at', '1672531200000']),
  ok('event.id of 128 characters', MIN_CO, ['event.id', 'x'.repeat(128)]),
  ok('event.id with inner spaces and diacritics', MIN_CO, ['event.id', 'Comandă nr. 1001/2024']),
  ok('IPv4 overide_ip', CO, ['context.overide_ip', '203.0.113.7']),
  ok('unknown members at every level', CO, ['source_system', 'erp'], ['event.timestamp', 1700000000000],
    ['context.session_id', 's-1'], ['products.0.margin', 12.5], ['user.segment', 'vip']),
  ok('cart_viewed total within 0.01', CART, ['event.value', 229.98]),
  ok('cart_viewed with a line in another currency', CART, ['products.1.currency', 'RON'], ['event.value', 99.98]),
  ok('cart_viewed without event.id', CART, ['event.id', REMOVE]),
  ok('cart_viewed without context.environment but with data_source', CART, ['context.environment', REMOVE]),
  ok('cart_viewed tax_percent at 50', CART, ['products.1.tax_percent', 50]),
  ok('coupon tax_percent as a padded numeric string', CO, ['coupons.0.tax_precent', REMOVE], ['coupons.0.tax_percent', ' 9.5 ']),
  ok('coupon tax_percent and tax_precent equal', CO, ['coupons.0.tax_percent', 19]),
  ok('order_canceled with value and currency', MIN_OC, ['event.value', 120.5], ['event.currency', 'EUR']),
  ok('lead_created with value and currency', MINIMAL_LEAD_CREATED, ['event.value', 0], ['event.currency', 'USD']),
  ok('order_canceled with products', MIN_OC, ['products', [{ id: 'A', name: 'A', price_base: 1, price: 1, category: 'C' }]]),
  ok('price equal to price_base', CO, ['products.0.price', 99.99]),
  ok('fractional quantity', CO, ['products.0.quantity', 1.5]),
  ok('shipping id as a string', CO, ['shipping.0.id', 'express-24h']),
  ok('environment dev', MIN_CO, ['context.environment', 'dev']),
  ok('empty arrays', CO, ['shipping', []], ['payments', []], ['coupons', []], ['cookies', []]),
];
