// JSON Schemas (2020-12) of the payload's nested objects: context, product, coupon, shipping,
// payment, user, consent, cookie. They state types, formats and ranges that hold on every
// event; what depends on event.name lives in event-schema.ts. Null means "absent" throughout.
import type { SchemaObject } from 'ajv/dist/2020.js';
import { ENVIRONMENTS } from './event-requirements.ts';

// Building blocks. An optional member also accepts null; a required one does not, so a null
// there fails as "required".
const optional = (type: string, extra: SchemaObject = {}): SchemaObject => ({ type: [type, 'null'], ...extra });
const text = optional('string');
const flag = optional('boolean');
/** Required identifiers and names: a string with something in it. */
const requiredText: SchemaObject = { type: 'string', minLength: 1 };
const amount = optional('number', { minimum: 0 });
const requiredAmount: SchemaObject = { type: 'number', minimum: 0 };
const count = optional('number', { minimum: 0 });
const taxPercent = optional('number', { minimum: 0, maximum: 100 });
const freeForm = optional('object', { description: 'Free-form attributes; passed through as sent.' });
const httpUrl = optional('string', { format: 'http-url' });
const timestamp: SchemaObject = {
  type: ['number', 'string', 'null'],
  format: 'timestamp',
  description: 'Milliseconds since the Unix epoch; a digit string or an ISO 8601 date string is converted.',
};
const arrayOf = (items: SchemaObject): SchemaObject => ({ type: ['array', 'null'], items });

/** ISO 4217 code; on a nested object, only when it differs from event.currency. */
export const currencySchema: SchemaObject = optional('string', { format: 'iso4217' });
/** Greater than 0; event default 1, nested objects inherit the event's when absent. */
export const exchangeRateSchema: SchemaObject = optional('number', { exclusiveMinimum: 0 });

/** Members the payload examples show without defining them: accepted, passed through, warned about. */
const undefinedInSpec: SchemaObject = {
  description: 'Appears in the payload examples without a definition; passed through unchanged, with a warning.',
};

const couponTaxPercent: SchemaObject = {
  type: ['number', 'string', 'null'],
  format: 'numeric-string',
  minimum: 0,
  maximum: 100,
  description: 'A number or numeric string, 0–100; normalised to the number `tax_percent`.',
};

export const couponSchema: SchemaObject = {
  type: 'object',
  description: 'An order-level or product-level coupon.',
  required: ['name'],
  properties: {
    name: requiredText,
    value: amount,
    tax_included: flag,
    tax_percent: couponTaxPercent,
    tax_precent: { ...couponTaxPercent, description: 'The general reference spells tax_percent this way; both are accepted.' },
    id: text,
    type: text,
    currency: currencySchema,
    exchange_rate: exchangeRateSchema,
    code: undefinedInSpec,
  },
};

const categorySchema: SchemaObject = {
  type: 'object',
  required: ['name'],
  properties: { name: requiredText, id: text },
};

export const productSchema: SchemaObject = {
  type: 'object',
  description: 'A line item. Defaults: parent_id ← id, parent_name ← name, parent_sku ← sku, ' +
    'tax_included true, quantity 1, type simple, stock_status true.',
  required: ['id', 'name', 'price_base', 'price'],
  properties: {
    id: requiredText,
    parent_id: text,
    name: requiredText,
    parent_name: text,
    price_base: { ...requiredAmount, description: 'Price before discounts; never below price.' },
    price: { ...requiredAmount, description: 'Selling price after discounts; never above price_base.' },
    tax_included: flag,
    tax_percent: { ...taxPercent, description: '0–100 (0–50 on cart_viewed).' },
    quantity: optional('number', { exclusiveMinimum: 0 }),
    category: text,
    sku: text,
    parent_sku: text,
    gtin: text,
    mpn: text,
    ean: text,
    brand: text,
    type: text,
    stock_status: {
      type: ['boolean', 'number', 'string', 'null'],
      description: 'Parsed to a boolean: numbers > 0 and most strings are in stock; ' +
        '"0", "no", "nu", "false", "out of stock", "sold out", "unavailable", "indisponibil", ' +
        '"fara stoc", "stoc epuizat" (any case) are out of stock.',
    },
    stock_location: text,
    created_at: timestamp,
    url: text,
    parent_url: text,
    image: text,
    images: arrayOf({ type: 'string' }),
    categories: arrayOf(categorySchema),
    coupons: arrayOf(couponSchema),
    properties: freeForm,
    currency: currencySchema,
    exchange_rate: exchangeRateSchema,
    image_url: undefinedInSpec,
    description: undefinedInSpec,
    tags: undefinedInSpec,
  },
};

export const shippingSchema: SchemaObject = {
  type: 'object',
  required: ['value'],
  properties: {
    name: text,
    value: requiredAmount,
    tax_included: flag,
    tax_percent: taxPercent,
    id: { type: ['string', 'number', 'null'] },
    type: text,
    currency: currencySchema,
    exchange_rate: exchangeRateSchema,
  },
};

export const paymentSchema: SchemaObject = {
  type: 'object',
  required: ['value'],
  properties: {
    name: text,
    value: requiredAmount,
    id: text,
    type: text,
    currency: currencySchema,
    exchange_rate: exchangeRateSchema,
  },
};

export const userSchema: SchemaObject = {
  type: ['object', 'null'],
  properties: {
    id: text,
    email: optional('string', {
      format: 'email-or-sha256',
      description: 'Plaintext or SHA-256 hex (plaintext only on cart_viewed).',
    }),
    phone: optional('string', {
      format: 'phone-or-sha256',
      description: 'E.164 preferred; spaces, dots, dashes and parentheses are normalised. Or SHA-256 hex (not on cart_viewed).',
    }),
    first_name: text,
    last_name: text,
    country: text,
    region: text,
    city: text,
    street: text,
    postal_code: text,
    orders_total_number: count,
    orders_canceled_number: count,
    orders_total_value: count,
    orders_refunded_value: count,
    predicted_value: count,
    created_at: timestamp,
    properties: freeForm,
    external_id: undefinedInSpec,
  },
};

/** The one shape consent is used in; see consentSchema for why the payload never refuses it. */
export const consentFormatSchema: SchemaObject = {
  type: 'object',
  required: ['analytics', 'personalization', 'marketing'],
  properties: {
    analytics: { type: 'boolean' },
    personalization: { type: 'boolean' },
    marketing: { type: 'boolean' },
  },
};

/** Consent never fails an event: any other shape is replaced with all true, with a warning. */
export const consentSchema: SchemaObject = {
  description: 'Three booleans. A missing or malformed consent object is replaced with all three true (a warning, not an error).',
  anyOf: [consentFormatSchema, true],
};

export const cookieSchema: SchemaObject = {
  type: 'object',
  required: ['name', 'value'],
  properties: { name: requiredText, value: { type: 'string' } },
};

export const contextSchema: SchemaObject = {
  type: ['object', 'null'],
  description: 'Required on every event except cart_viewed, where a missing environment becomes prod.',
  properties: {
    environment: { type: ['string', 'null'], enum: [...ENVIRONMENTS, null] },
    data_source: optional('string', {
      description: 'website, phone, admin, app, marketplace (or the marketplace name), crm. Recommended.',
    }),
    user_agent: text,
    overide_ip: optional('string', { format: 'ip-address', description: 'The documented spelling; override_ip is accepted too.' }),
    override_ip: optional('string', { format: 'ip-address', description: 'Accepted alias of overide_ip (a warning says so).' }),
    url: httpUrl,
    landing_url: httpUrl,
    referrer_url: httpUrl,
    page_type: text,
  },
};

export { arrayOf };
