// The schema module's public surface: the validator, the schemas /openapi.json embeds, the
// shared Ajv instance, and the small parsers other modules reuse.
export { validateEvent } from './validate-event.ts';
export {
  eventPayloadSchema,
  eventSchema,
  contextSchema,
  productSchema,
  couponSchema,
  shippingSchema,
  paymentSchema,
  userSchema,
  consentSchema,
  consentFormatSchema,
  cookieSchema,
} from './event-schema.ts';
export { ajv } from './ajv.ts';
export { translateErrors, toField } from './translate-errors.ts';
export { isCurrencyCode } from './currencies.ts';
export { parseStockStatus } from './stock-status.ts';
export { eventIdProblem, parseNumericString, parseTimestamp } from './formats.ts';
export {
  VALUE_REQUIRED_EVENTS,
  ID_REQUIRED_EVENTS,
  PRODUCTS_REQUIRED_EVENTS,
  PRODUCT_TYPES,
  ENVIRONMENTS,
  DATA_SOURCES,
} from './event-requirements.ts';
export type * from './types.ts';
