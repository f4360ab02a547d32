// JSON Schema (draft-07) of one Meta server event as the rules must produce it: the
// `event_name`, optionally Meta's `action_source` and the `custom_data` and `user_data`
// objects; other Conversions API keys a rule adds are merged into the event as written.
export const nativeSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['event_name'],
  properties: {
    event_name: { type: 'string', minLength: 1 },
    action_source: { enum: ['website', 'app', 'email', 'phone_call', 'chat', 'physical_store', 'system_generated', 'business_messaging', 'other'] },
    custom_data: { type: 'object' },
    user_data: { type: 'object' },
  },
};
