// JSON Schema (draft-07) of one GA4 native event as the rules must produce it: an event
// `name` and its `params` object. Lengths and counts are GA4's limits, enforced with warnings
// by limits.ts rather than refused here; other top-level keys are merged into the body.
export const nativeSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1 },
    params: { type: 'object' },
  },
};
