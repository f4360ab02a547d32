// JSON Schema (draft-07) of one Microsoft UET event as the rules must produce it: the event
// type, the event action (`eventName`, required for custom events) and customData with the
// keys the CAPI guide lists; optionally the page fields and the event's own time. The
// envelope (eventId, adStorageConsent, userData) is this plugin's to add, so rules may not
// write it; a key Microsoft does not know is refused rather than sent.

const text = { type: 'string', minLength: 1 } as const;
const amount = { type: 'number', minimum: 0 } as const;

export const PAGE_TYPES = ['cart', 'category', 'home', 'other', 'product', 'purchase', 'searchresults'] as const;

export const nativeSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  additionalProperties: false,
  properties: {
    eventType: { enum: ['custom', 'pageLoad'] },
    eventName: { type: 'string', minLength: 1, maxLength: 100 },
    eventTime: { type: 'integer', minimum: 1_000_000_000 },
    eventSourceUrl: text,
    pageLoadId: { type: 'string', pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' },
    referrerUrl: text,
    pageTitle: text,
    keywords: text,
    customData: {
      type: 'object',
      additionalProperties: false,
      properties: {
        eventCategory: text,
        eventLabel: text,
        eventValue: { type: 'number' },
        searchTerm: text,
        transactionId: text,
        value: amount,
        currency: { type: 'string', pattern: '^[A-Z]{3}$' },
        items: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            properties: { id: text, quantity: { type: 'integer', minimum: 0 }, price: amount, name: { type: 'string' } },
          },
        },
        itemIds: { type: 'array', items: text },
        pageType: { enum: [...PAGE_TYPES] },
        ecommTotalValue: amount,
        ecommCategory: text,
        hotelData: {
          type: 'object',
          additionalProperties: false,
          properties: {
            totalPrice: amount,
            basePrice: amount,
            checkinDate: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
            checkoutDate: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
            lengthOfStay: { type: 'integer', minimum: 1 },
            partnerHotelId: text,
            bookingHref: text,
          },
        },
      },
    },
  },
  // Page loads carry no revenue (the guide: send it on a custom event); custom events need their action.
  if: { required: ['eventType'], properties: { eventType: { const: 'pageLoad' } } },
  then: { properties: { customData: false } },
  else: { required: ['eventName'], properties: { eventName: { type: 'string' } } },
};
