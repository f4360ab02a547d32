// JSON Schema (draft-07) of one TikTok native event as the rules must produce it: the
// `event` name, optionally `event_source` (`web`, or `crm` for CRM lead stages), the
// `properties` object and, for CRM events, the `lead` object.
export const nativeSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['event'],
  properties: {
    event: { type: 'string', minLength: 1 },
    event_source: { enum: ['web', 'crm'] },
    properties: { type: 'object' },
    lead: { type: 'object' },
  },
};
