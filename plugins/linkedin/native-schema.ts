// JSON Schema (draft-07) of one LinkedIn native event as the rules must produce it: the
// conversion rule, optionally the conversion value and the company and job title for
// userInfo. The envelope (conversionHappenedAt, eventId, userIds, names, country) is this
// plugin's to add, so rules may not write it; a key LinkedIn does not know is refused.
import { CONVERSION_RULE_ID } from './settings.ts';

const text = { type: 'string', minLength: 1 } as const;

export const nativeSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['conversion'],
  additionalProperties: false,
  properties: {
    conversion: { anyOf: [{ type: 'string', pattern: CONVERSION_RULE_ID }, { type: 'integer', minimum: 1 }] },
    conversionValue: {
      type: 'object',
      additionalProperties: false,
      properties: {
        currencyCode: { type: 'string', pattern: '^[A-Z]{3}$' },
        amount: { anyOf: [{ type: 'number', minimum: 0 }, { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?$' }] },
      },
    },
    user: {
      type: 'object',
      additionalProperties: false,
      properties: {
        userInfo: { type: 'object', additionalProperties: false, properties: { companyName: text, title: text } },
      },
    },
  },
};
