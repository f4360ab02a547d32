// JSON Schema (draft-07) of one Snap native event as the rules must produce it: a documented
// v3 event name, and optionally the action source, page URL, Snap's data processing options
// and custom_data. The envelope (event_time, event_id, user_data) is this plugin's to add,
// so rules may not write it; a top-level key Snap does not know is refused rather than sent.

const amount = { anyOf: [{ type: 'number', minimum: 0 }, { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?$' }] } as const;
const count = { anyOf: [{ type: 'integer', minimum: 0 }, { type: 'string', pattern: '^[0-9]+$' }] } as const;

export const NATIVE_EVENT_NAMES = [
  'PAGE_VIEW', 'VIEW_CONTENT', 'ADD_CART', 'ADD_TO_WISHLIST', 'SIGN_UP', 'SEARCH', 'PURCHASE', 'ADD_BILLING',
  'START_CHECKOUT', 'SUBSCRIBE', 'START_TRIAL', 'LIST_VIEW', 'SAVE', 'SHARE', 'LOGIN', 'RESERVE', 'INVITE', 'RATE',
  'COMPLETE_TUTORIAL', 'LEVEL_COMPLETE', 'ACHIEVEMENT_UNLOCKED', 'SPEND_CREDITS', 'AD_CLICK', 'AD_VIEW',
  'CUSTOM_EVENT_1', 'CUSTOM_EVENT_2', 'CUSTOM_EVENT_3', 'CUSTOM_EVENT_4', 'CUSTOM_EVENT_5',
] as const;
export const ACTION_SOURCES = ['WEB', 'MOBILE_APP', 'OFFLINE'] as const;

export const nativeSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['event_name'],
  additionalProperties: false,
  properties: {
    event_name: { enum: [...NATIVE_EVENT_NAMES] },
    action_source: { enum: [...ACTION_SOURCES] },
    event_source_url: { type: 'string', minLength: 1 },
    data_processing_options: { type: 'array', items: { type: 'string', minLength: 1 } },
    custom_data: {
      type: 'object',
      properties: {
        currency: { type: 'string', pattern: '^[A-Z]{3}$' },
        value: amount,
        content_ids: { type: 'array', items: { type: 'string', minLength: 1 } },
        content_category: { type: 'string' },
        contents: {
          type: 'array',
          items: {
            type: 'object',
            required: ['id'],
            properties: { id: { type: 'string', minLength: 1 }, quantity: count, item_price: amount, brand: { type: 'string' } },
          },
        },
        num_items: { type: 'integer', minimum: 0 },
        order_id: { type: 'string', minLength: 1 },
        search_string: { type: 'string' },
        sign_up_method: { type: 'string' },
        brands: { type: 'array', items: { type: 'string' } },
      },
    },
  },
};
