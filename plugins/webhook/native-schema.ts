// JSON Schema (draft-07) of one webhook message as the rules must produce it: its `type`
// (the receiver routes on it; the event name when absent) and the `data` object sent as
// the body's data.
export const nativeSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: {
    type: { type: 'string', minLength: 1 },
    data: { type: 'object' },
  },
};
