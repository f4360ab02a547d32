// Which members each event name requires, and the value lists the payload reference gives. Kept as data
// in one place: the schema's conditionals, the rules and the docs all read these lists.

/** event.value and event.currency are required (optional elsewhere; a value always needs a currency). */
export const VALUE_REQUIRED_EVENTS = [
  'checkout_completed',
  'cart_viewed',
  'product_viewed',
  'product_added_to_cart',
  'product_removed_from_cart',
] as const;

/** event.id is required: transactions, orders and leads, which destinations deduplicate. */
export const ID_REQUIRED_EVENTS = [
  'checkout_completed',
  'order_canceled',
  'lead_created',
  'lead_qualified',
  'lead_closed',
] as const;

/** products must be a non-empty array. */
export const PRODUCTS_REQUIRED_EVENTS = [
  'cart_viewed',
  'product_viewed',
  'product_added_to_cart',
  'product_removed_from_cart',
] as const;

/** The one event with its own reference: context optional, plaintext PII, value = Σ price × quantity. */
export const CART_VIEWED = 'cart_viewed';

/** product.type values of the general reference (free-form on cart_viewed). */
export const PRODUCT_TYPES = ['simple', 'variable', 'virtual', 'bundle', 'subscription', 'external'] as const;

/** context.environment values. */
export const ENVIRONMENTS = ['prod', 'dev'] as const;

/** context.data_source values the payload reference documents; others are accepted with a warning. */
export const DATA_SOURCES: ReadonlySet<string> = new Set(['website', 'phone', 'admin', 'app', 'marketplace', 'crm']);

/** Upper bound of product.tax_percent on cart_viewed (0–100 elsewhere). */
export const CART_TAX_PERCENT_MAX = 50;

/** Largest gap between cart_viewed event.value and Σ price × quantity still taken as equal. */
export const CART_TOTAL_TOLERANCE = 0.01;
