// The preset dictionary of stored event payloads, format 1 (payload-codec.ts): JSON fragments
// a normalised payload is made of (the payload schema's member names, the nine event names,
// the normalised shape with its defaults), so deflate can refer to them from the first byte
// instead of spelling them out in every row. Fragments near the end are the cheapest to refer
// to, so the most common come last. Every row of format 1 was compressed against exactly these
// bytes: never edit them (a test pins their hash); a better dictionary is a new format.
// Loaded in the SQLite commit thread (sqlite/writer-thread.ts): no top-level await.

/** Members an event rarely has: referred to by name only. */
const RARE_MEMBERS = [
  'event', 'context', 'override_ip', 'landing_url', 'referrer_url', 'page_type', 'products', 'sku', 'parent_sku', 'gtin', 'mpn', 'ean',
  'stock_location', 'created_at', 'parent_url', 'image', 'images', 'categories', 'coupons', 'tax_precent', 'code', 'image_url',
  'description', 'tags', 'shipping', 'payments', 'user', 'region', 'street', 'postal_code', 'orders_total_number',
  'orders_canceled_number', 'orders_total_value', 'orders_refunded_value', 'predicted_value', 'external_id', 'consent', 'cookies',
];

const EVENT_NAMES = [
  'checkout_completed', 'order_canceled', 'lead_created', 'lead_qualified', 'lead_closed', 'cart_viewed', 'product_viewed',
  'product_added_to_cart', 'product_removed_from_cart',
];

/** A normalised payload with every common member, values left out or at their usual defaults. */
const SHAPE = '{"event":{"name":"","id":"","value":0,"currency":"EUR","properties":{},"exchange_rate":1},' +
  '"context":{"environment":"prod","data_source":"website","url":"https://www.",' +
  '"user_agent":"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/","overide_ip":"","page_type":""},' +
  '"products":[{"id":"","name":"","category":"","price_base":0,"price":0,"tax_percent":19,"quantity":1,"brand":"","parent_id":"",' +
  '"parent_name":"","tax_included":true,"type":"simple","stock_status":true}],' +
  '"shipping":[{"name":"","value":0,"tax_percent":19}],"payments":[{"name":"","value":0,"type":"card"}],"coupons":[],' +
  '"consent":{"analytics":true,"personalization":true,"marketing":true},' +
  '"cookies":[{"name":"","value":""}],' +
  '"user":{"id":"","email":"","phone":"+","first_name":"","last_name":"","country":"","city":""}}';

/** Format 1's dictionary, as deflate and inflate take it. */
export const PAYLOAD_DICTIONARY_1: Buffer = Buffer.from(
  RARE_MEMBERS.map((m) => `"${m}":`).join('') + EVENT_NAMES.map((n) => `"name":"${n}"`).join(',') + SHAPE, 'utf8');
