// JSON Schema (draft-07) of one Google Ads native event as the rules must produce it: a
// click conversion (`kind` absent or `click`) or an adjustment, with the conversion action
// as digits or its resource name, the value, the currency code and the order id.
export const nativeSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: {
    kind: { enum: ['click', 'adjustment'] },
    conversionAction: { anyOf: [{ type: 'string', minLength: 1 }, { type: 'integer', minimum: 1 }] },
    conversionValue: { type: 'number' },
    currencyCode: { type: 'string', pattern: '^[A-Z]{3}$' },
    orderId: { type: 'string', minLength: 1 },
    adjustmentType: { enum: ['RETRACTION', 'RESTATEMENT', 'ENHANCEMENT'] },
    cartData: { type: 'object' },
  },
};
