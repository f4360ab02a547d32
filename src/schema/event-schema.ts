// The standard event payload as one JSON Schema (2020-12): the objects' shapes plus, as
// if/then conditionals on event.name, what each event type requires. The validator compiles
// exactly this object, and /openapi.json embeds it, so the docs are the rules.
import type { SchemaObject } from 'ajv/dist/2020.js';
import {
  CART_TAX_PERCENT_MAX,
  CART_VIEWED,
  ID_REQUIRED_EVENTS,
  PRODUCT_TYPES,
  PRODUCTS_REQUIRED_EVENTS,
  VALUE_REQUIRED_EVENTS,
} from './event-requirements.ts';
import {
  arrayOf,
  consentSchema,
  contextSchema,
  cookieSchema,
  couponSchema,
  currencySchema,
  exchangeRateSchema,
  paymentSchema,
  productSchema,
  shippingSchema,
  userSchema,
} from './object-schemas.ts';

export {
  consentFormatSchema,
  consentSchema,
  contextSchema,
  cookieSchema,
  couponSchema,
  paymentSchema,
  productSchema,
  shippingSchema,
  userSchema,
} from './object-schemas.ts';

export const eventSchema: SchemaObject = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, description: 'Event type; must be approved for the account.' },
    value: { type: ['number', 'null'], minimum: 0 },
    currency: currencySchema,
    exchange_rate: { ...exchangeRateSchema, description: 'Default 1.' },
    id: {
      type: ['string', 'null'],
      format: 'event-id',
      description: '1–128 printable characters, no leading or trailing whitespace. Required for ' +
        `${ID_REQUIRED_EVENTS.join(', ')}.`,
    },
    properties: { type: ['object', 'null'], description: 'Free-form custom event attributes.' },
  },
  // A value is meaningless without its currency, on every event.
  if: { required: ['value'], properties: { value: { type: 'number' } } },
  then: { required: ['currency'], properties: { currency: { type: 'string' } } },
};

/** `if` that holds when event.name is one of `names`. */
function whenEventIs(names: readonly string[], then: SchemaObject, otherwise?: SchemaObject): SchemaObject {
  const name = names.length === 1 ? { const: names[0] } : { enum: [...names] };
  return {
    if: {
      type: 'object',
      required: ['event'],
      properties: { event: { type: 'object', required: ['name'], properties: { name } } },
    },
    then: { type: 'object', ...then },
    ...(otherwise ? { else: { type: 'object', ...otherwise } } : {}),
  };
}

const requireEventMembers = (members: Record<string, SchemaObject>): SchemaObject => ({
  properties: { event: { type: 'object', required: Object.keys(members), properties: members } },
});

/** Per-event-name requirements; a failing branch reads "… is required for <name> events". */
const byEventName: SchemaObject[] = [
  whenEventIs(VALUE_REQUIRED_EVENTS, requireEventMembers({ value: { type: 'number' }, currency: { type: 'string' } })),
  whenEventIs(ID_REQUIRED_EVENTS, requireEventMembers({ id: { type: 'string' } })),
  whenEventIs(PRODUCTS_REQUIRED_EVENTS, {
    required: ['products'],
    properties: { products: { type: 'array', minItems: 1 } },
  }),
  whenEventIs(
    [CART_VIEWED],
    // cart_viewed: context and product category optional, type free-form, tax_percent 0–50.
    {
      properties: {
        products: arrayOf({
          type: 'object',
          properties: { tax_percent: { type: ['number', 'null'], maximum: CART_TAX_PERCENT_MAX } },
        }),
      },
    },
    // Every other event: the general reference.
    {
      required: ['context'],
      properties: {
        context: {
          type: 'object',
          required: ['environment'],
          properties: { environment: { type: 'string' } },
        },
        products: arrayOf({
          type: 'object',
          required: ['category'],
          properties: {
            category: { type: 'string' },
            type: { type: ['string', 'null'], enum: [...PRODUCT_TYPES, null] },
          },
        }),
      },
    },
  ),
];

/** Frozen all the way down: whoever embeds the schema cannot change what the validator runs. */
function deepFreeze<T extends object>(o: T): T {
  for (const v of Object.values(o)) if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) deepFreeze(v);
  return Object.freeze(o);
}

/**
 * The standard event payload (spec "Resources and their fields"), without `$id` so it can be
 * embedded or compiled again anywhere. Unknown members are allowed everywhere: customers send
 * extras, and they pass through.
 */
export const eventPayloadSchema: SchemaObject = deepFreeze({
  title: 'Standard event payload',
  type: 'object',
  required: ['event'],
  properties: {
    event: eventSchema,
    context: contextSchema,
    products: arrayOf(productSchema),
    shipping: arrayOf(shippingSchema),
    payments: arrayOf(paymentSchema),
    coupons: arrayOf(couponSchema),
    user: userSchema,
    consent: consentSchema,
    cookies: arrayOf(cookieSchema),
  },
  allOf: byEventName,
});
