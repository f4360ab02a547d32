// OpenAPI 3.1 of the intake endpoints, built from the very schema object the
// validator compiles, so the document cannot describe a different payload.
import { eventPayloadSchema } from '../schema/event-schema.ts';
import { ERROR_CODES } from '../errors.ts';
import { INTAKE_PATHS } from './intake-routes.ts';
import { BATCH_PATH } from './batch-route.ts';

const ackSchema = {
  type: 'object',
  required: ['emitter', 'detail', 'level', 'version'],
  properties: {
    emitter: { type: 'string', const: 'tracklane' },
    detail: { type: 'string' },
    level: { type: 'integer', enum: [0, 1, 2], description: '0 accepted cleanly, 1 accepted with warnings, 2 failed' },
    version: { type: 'integer', const: 1 },
    errors: { type: 'array', items: { type: 'string' }, description: 'Each string starts with its code, e.g. "INVALID_CREDENTIALS: …"' },
  },
};

const testSchema = {
  allOf: [{ $ref: '#/components/schemas/Ack' }],
  type: 'object',
  required: ['errors', 'warnings', 'data_received'],
  properties: {
    errors: { type: 'array', items: { type: 'string' } },
    warnings: { type: 'array', items: { type: 'string' } },
    data_received: { type: 'object', description: 'The payload as received' },
    data_normalized: { type: ['object', 'null'], description: 'The event after defaults and normalisation; null when it has errors' },
    preview: {
      type: 'array',
      description: 'Per connected destination: the exact request(s) it would be sent (secrets masked), or why it is skipped. Nothing is sent, unless ?validate=platform asks each platform to check them.',
      items: {
        type: 'object',
        required: ['destination_id', 'type', 'name', 'status', 'requests', 'warnings'],
        properties: {
          destination_id: { type: 'string' },
          type: { type: 'string' },
          name: { type: 'string' },
          status: { type: 'string', enum: ['would_send', 'skipped'] },
          reason: { type: 'string', enum: ['disabled', 'dev_environment', 'consent', 'not_allow_listed', 'no_matching_rule', 'condition_not_met', 'rule_budget_exceeded', 'unmatchable', 'no_test_mode', 'plugin_missing', 'build_failed'] },
          message: { type: 'string' },
          requests: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                method: { type: 'string' },
                url: { type: 'string' },
                headers: { type: 'object', additionalProperties: { type: 'string' } },
                body: { description: 'The body, parsed' },
                raw_body: { type: 'string', description: 'The body exactly as it would be sent' },
              },
            },
          },
          warnings: { type: 'array', items: { type: 'string' } },
          validation: {
            type: 'object',
            description: 'With ?validate=platform, on would_send entries: what the platform\'s validation path said (3 s per request)',
            required: ['verdict', 'messages', 'requests'],
            properties: {
              verdict: { type: 'string', enum: ['valid', 'invalid', 'error', 'timeout', 'not_available'] },
              messages: { type: 'array', items: { type: 'string' } },
              requests: {
                type: 'array',
                description: 'One per request, in order',
                items: {
                  type: 'object',
                  required: ['verdict', 'messages', 'status', 'latency_ms'],
                  properties: {
                    verdict: { type: 'string', enum: ['valid', 'invalid', 'error', 'timeout'] },
                    messages: { type: 'array', items: { type: 'string' } },
                    status: { type: ['integer', 'null'], description: 'The platform\'s HTTP status; null without an answer' },
                    latency_ms: { type: 'integer' },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
};

const issueSchema = {
  type: 'object',
  required: ['field', 'code', 'message'],
  properties: {
    field: { type: 'string', examples: ['products[1].price'] },
    code: { type: 'string', enum: [...ERROR_CODES] },
    message: { type: 'string' },
  },
};

const standardSchema = {
  type: 'object',
  required: ['status', 'message'],
  properties: {
    status: { type: 'string', enum: ['success', 'error'] },
    message: { type: 'string' },
    errors: { type: 'array', items: { $ref: '#/components/schemas/Issue' } },
    warnings: { type: 'array', items: { type: 'object' } },
  },
};

const batchResultSchema = {
  type: 'object',
  required: ['index', 'id', 'status', 'errors', 'warnings'],
  properties: {
    index: { type: 'integer', minimum: 0, description: 'Position in `batch`' },
    id: { type: ['string', 'null'], description: 'The event\'s event.id, when it has one' },
    status: { type: 'string', enum: ['rejected', 'duplicate'] },
    errors: { type: 'array', items: { $ref: '#/components/schemas/Issue' } },
    warnings: { type: 'array', items: { $ref: '#/components/schemas/Issue' } },
  },
};

const batchResponseSchema = {
  allOf: [{ $ref: '#/components/schemas/Ack' }],
  type: 'object',
  required: ['accepted', 'rejected', 'duplicates', 'results'],
  properties: {
    accepted: { type: 'integer', minimum: 0 },
    rejected: { type: 'integer', minimum: 0 },
    duplicates: { type: 'integer', minimum: 0 },
    results: { type: 'array', description: 'In batch order, only the events that were not accepted', items: { $ref: '#/components/schemas/BatchResult' } },
  },
};

function withoutSchemaIds(schema: object): object {
  const { $id: _id, $schema: _s, ...rest } = schema as Record<string, unknown>;
  return rest;
}

const errorResponses = (shape: string) => {
  const ref = { content: { 'application/json': { schema: { $ref: `#/components/schemas/${shape}` } } } };
  return {
    '400': { description: 'Body is not JSON, not an object, too deep, has forbidden keys or non-finite numbers (INVALID_JSON, INVALID_BODY)', ...ref },
    '401': { description: 'AUTH_MISSING or INVALID_CREDENTIALS', ...ref },
    '403': { description: 'ACCESS_NOT_ENABLED: account disabled, no add-on, or tier below FLEX', ...ref },
    '405': { description: 'Only POST is allowed' },
    '413': { description: 'PAYLOAD_TOO_LARGE', ...ref },
    '415': { description: 'UNSUPPORTED_MEDIA_TYPE: Content-Type must be application/json', ...ref },
    '429': { description: 'RATE_LIMITED, with Retry-After', ...ref },
    '503': { description: 'UNAVAILABLE: the event was not stored; retry after Retry-After', ...ref },
  };
};

const operation = (summary: string, description: string, okSchema: string, errShape: string, extra: Record<string, unknown> = {}, parameters: object[] = []) => ({
  summary,
  description,
  security: [{ accessToken: [] }],
  parameters: [
    { name: 'id', in: 'query', required: true, schema: { type: 'string', pattern: '^[A-Z0-9]{8}$' }, description: 'Script id' },
    ...parameters,
  ],
  requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/EventPayload' } } } },
  responses: {
    '200': { description: 'See summary', content: { 'application/json': { schema: { $ref: `#/components/schemas/${okSchema}` } } } },
    ...errorResponses(errShape),
    ...extra,
  },
});

export function buildOpenApi(): object {
  return {
    openapi: '3.1.0',
    info: { title: 'tracklane intake', version: '1', description: 'Server-side tracking webhook: standard, test, batch and Event Create endpoints.' },
    paths: {
      [INTAKE_PATHS.event]: {
        post: operation('Send an event (production)', 'Acknowledged after the event is durably stored; processing is asynchronous. Events that fail validation are acknowledged too and kept as rejected.', 'Ack', 'Ack'),
      },
      [INTAKE_PATHS.test]: {
        post: operation('Validate an event (test)',
          'Runs validation synchronously and returns errors, warnings, the normalised event and each destination\'s preview. Nothing is stored; nothing is sent unless validate=platform.',
          'TestResponse', 'Ack', {}, [{
            name: 'validate', in: 'query', required: false, schema: { type: 'string', enum: ['platform'] },
            description: 'platform: each previewed request is also sent to its platform\'s validation path (3 s budget each); the verdicts are in preview[].validation. Any other value: 400 INVALID_VALUE',
          }]),
      },
      [BATCH_PATH]: {
        post: {
          ...operation('Send a batch of events (production)',
            'Up to MAX_BATCH_EVENTS events (default 1000) in at most MAX_BATCH_BYTES (default 4 MiB), each checked as on the single-event endpoint, committed in one transaction and acknowledged after it: all stored or none (503). Invalid events are stored as rejected and listed in results with duplicates. The per-account rate limit counts events.',
            'BatchResponse', 'Ack', {
              '400': { description: 'INVALID_BODY: not JSON, not an object, or no non-empty "batch" array', content: { 'application/json': { schema: { $ref: '#/components/schemas/Ack' } } } },
              '413': { description: 'PAYLOAD_TOO_LARGE: more than MAX_BATCH_EVENTS events or MAX_BATCH_BYTES bytes; nothing stored', content: { 'application/json': { schema: { $ref: '#/components/schemas/Ack' } } } },
            }),
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/BatchPayload' } } } },
        },
      },
      [INTAKE_PATHS.standard]: {
        post: operation('Create an event', 'Validates, stores and acknowledges; answers 400 with coded errors when validation fails.', 'StandardResponse', 'StandardResponse', {
          '400': { description: 'Validation failed, or the body is unusable', content: { 'application/json': { schema: { $ref: '#/components/schemas/StandardResponse' } } } },
        }),
      },
    },
    components: {
      securitySchemes: { accessToken: { type: 'apiKey', in: 'header', name: 'X-Service-Access-Token' } },
      schemas: {
        EventPayload: withoutSchemaIds(eventPayloadSchema),
        Ack: ackSchema,
        TestResponse: testSchema,
        Issue: issueSchema,
        StandardResponse: standardSchema,
        BatchPayload: {
          type: 'object',
          required: ['batch'],
          properties: { batch: { type: 'array', minItems: 1, maxItems: 1000, items: { $ref: '#/components/schemas/EventPayload' } } },
        },
        BatchResponse: batchResponseSchema,
        BatchResult: batchResultSchema,
      },
    },
  };
}
