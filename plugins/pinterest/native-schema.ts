// JSON Schema (draft-07) of one Pinterest native event as the rules must produce it: the
// event name, and optionally the action source, page URL and custom_data. The envelope
// (event_time, event_id, user_data) is this plugin's to add, so rules may not write it; a
// key Pinterest does not know is refused rather than sent.

const idList = { type: 'array', items: { type: 'string', minLength: 1 } } as const;
const amount = { anyOf: [{ type: 'number', minimum: 0 }, { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?$' }] } as const;

export const NATIVE_EVENT_NAMES = ['checkout', 'add_to_cart', 'page_visit', 'view_category', 'search', 'lead', 'signup', 'custom'] as const;
export const ACTION_SOURCES = ['app_android', 'app_ios', 'web', 'offline'] as const;

export const nativeSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['event_name'],
  additionalProperties: false,
  properties: {
    event_name: { enum: [...NATIVE_EVENT_NAMES] },
    action_source: { enum: [...ACTION_SOURCES] },
    event_source_url: { type: 'string', minLength: 1 },
    custom_data: {
      type: 'object',
      additionalProperties: false,
      properties: {
        currency: { type: 'string', pattern: '^[A-Z]{3}$' },
        value: amount,
        content_ids: idList,
        content_name: { type: 'string' },
        content_category: { type: 'string' },
        content_brand: { type: 'string' },
        contents: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            properties: { id: { type: 'string', minLength: 1 }, item_price: amount, quantity: { type: 'integer', minimum: 0 } },
          },
        },
        num_items: { type: 'integer', minimum: 0 },
        order_id: { type: 'string', minLength: 1 },
        search_string: { type: 'string' },
      },
    },
  },
};
