// JSON Schema (draft-07) of one GA4 native event as the rules must produce it: an event
// `name`, its `params`, optionally its own `timestamp_micros` and the request-level
// `user_properties` (build-requests.ts lifts them out of the event). Lengths and counts are
// GA4's limits, enforced with warnings by limits.ts rather than refused here.
const scalar = { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }] };

export const nativeSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1 },
    params: {
      type: 'object',
      properties: {
        page_location: { type: 'string' },
        page_referrer: { type: 'string' },
      },
    },
    timestamp_micros: { type: 'number', exclusiveMinimum: 0, description: "the event's time in microseconds since the epoch" },
    user_properties: {
      type: 'object',
      description: 'name → a value, or {value, timestamp_micros}',
      additionalProperties: {
        anyOf: [
          ...scalar.anyOf,
          { type: 'object', required: ['value'], properties: { value: scalar, timestamp_micros: { type: 'number' } } },
        ],
      },
    },
  },
};
