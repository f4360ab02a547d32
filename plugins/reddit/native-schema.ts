// JSON Schema (draft-07) of one Reddit native event as the rules must produce it: the
// event type (tracking_type, and custom_event_name for CUSTOM), optionally the action
// source, page URL and metadata. The envelope (event_at, click_id, user,
// metadata.conversion_id) is this plugin's to add, so rules may not write it; a key the
// v3 API does not know is refused rather than sent.

export const TRACKING_TYPES = ['PURCHASE', 'ADD_TO_CART', 'VIEW_CONTENT', 'LEAD', 'SIGN_UP', 'PAGE_VISIT', 'SEARCH', 'ADD_TO_WISHLIST', 'CUSTOM'] as const;
export const ACTION_SOURCES = ['WEBSITE', 'APP', 'PHYSICAL_STORE', 'OTHER'] as const;

const money = { type: 'number', minimum: 0 } as const;

export const nativeSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['type'],
  additionalProperties: false,
  properties: {
    type: {
      type: 'object',
      required: ['tracking_type'],
      additionalProperties: false,
      properties: {
        tracking_type: { enum: [...TRACKING_TYPES] },
        custom_event_name: { type: 'string', minLength: 1, maxLength: 64 },
      },
      // CUSTOM needs its name; the standard types take none.
      if: { properties: { tracking_type: { const: 'CUSTOM' } } },
      then: { properties: { custom_event_name: { type: 'string' } }, required: ['custom_event_name'] },
      else: { properties: { custom_event_name: false } },
    },
    action_source: { enum: [...ACTION_SOURCES] },
    event_source_url: { type: 'string', minLength: 1 },
    metadata: {
      type: 'object',
      additionalProperties: false,
      properties: {
        value: money,
        currency: { type: 'string', pattern: '^[A-Z]{3}$' },
        item_count: { type: 'integer', minimum: 0 },
        products: {
          type: 'array',
          items: {
            type: 'object',
            required: ['id'],
            additionalProperties: false,
            properties: {
              id: { type: 'string', minLength: 1 },
              name: { type: 'string' },
              category: { type: 'string' },
              quantity: { type: 'integer', minimum: 0 },
              item_price: money,
            },
          },
        },
      },
    },
  },
};
