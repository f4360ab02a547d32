// The admin API's part of /openapi.json: every /admin path with its parameters, body and
// answers, bearer-authenticated. Written as a table so adding a route is one line here.

type Param = [name: string, where: 'query' | 'path', type: 'string' | 'integer' | 'boolean', description: string];

interface Op {
  method: 'get' | 'post' | 'patch' | 'delete';
  path: string;
  summary: string;
  params?: Param[];
  /** Request body properties (all JSON). */
  body?: Record<string, object>;
  required?: string[];
  /** Extra error answers beyond 401. */
  errors?: Record<string, string>;
  stream?: boolean;
  created?: boolean;
}

const page: Param[] = [
  ['limit', 'query', 'integer', 'Page size, 1–500 (default 50)'],
  ['cursor', 'query', 'string', 'next_cursor of the previous page'],
];
const scope: Param = ['scope', 'query', 'string', '"default" or a script id (default "default")'];
const destination: Param = ['destination', 'path', 'string', 'Destination type: the name of a plugin folder under plugins/'];
const draft = { scope: { type: 'string' }, document: { type: 'object', description: 'A rule file: {destination, rules}' } };

const OPS: Op[] = [
  { method: 'get', path: '/admin/overview', summary: 'Counts, dispatch backlog, paused destinations, rule state' },
  { method: 'get', path: '/admin/accounts', summary: 'Accounts (no tokens)' },
  {
    method: 'post', path: '/admin/accounts', summary: 'Create an account; the access token is in this answer only', created: true,
    body: { name: { type: 'string' }, tier: { type: 'string' }, addon: { type: 'boolean' }, host: { type: ['string', 'null'] }, country: { type: ['string', 'null'] }, tax_rate: { type: ['number', 'null'] } },
    required: ['name'], errors: { '400': 'INVALID_VALUE / INVALID_TYPE / REQUIRED_FIELD_MISSING' },
  },
  {
    method: 'patch', path: '/admin/accounts/{id}', summary: 'Change an account (the fields given)', params: [['id', 'path', 'string', 'Script id']],
    body: {
      name: { type: 'string' }, tier: { type: 'string' }, addon: { type: 'boolean' }, enabled: { type: 'boolean' }, host: { type: ['string', 'null'] },
      country: { type: ['string', 'null'] }, tax_rate: { type: ['number', 'null'] }, approve_events: { type: 'array', items: { type: 'string' } },
      customer: { type: ['string', 'null'] }, rate_limit: { type: ['number', 'null'] },
      consent_default: { type: 'string', enum: ['granted', 'denied'] },
    },
    errors: { '400': 'INVALID_VALUE / INVALID_TYPE', '404': 'NOT_FOUND' },
  },
  {
    method: 'post', path: '/admin/accounts/{id}/rotate-token', summary: 'Issue a new token; older ones keep working for grace_hours (default 24)',
    params: [['id', 'path', 'string', 'Script id']], body: { grace_hours: { type: 'number' } }, errors: { '404': 'NOT_FOUND' },
  },
  { method: 'get', path: '/admin/plugins', summary: 'Destination plugins loaded' },
  {
    method: 'post', path: '/admin/destinations', summary: 'Connect a destination (config checked against the plugin schema and the SSRF guard)', created: true,
    body: { script_id: { type: 'string' }, type: { type: 'string' }, name: { type: 'string' }, config: { type: 'object' } }, required: ['script_id', 'type', 'config'],
    errors: { '400': 'INVALID_VALUE', '404': 'NOT_FOUND' },
  },
  {
    method: 'patch', path: '/admin/destinations/{id}', summary: 'Change config (merge patch; null removes a key; replace_config replaces it), name or enabled',
    params: [['id', 'path', 'string', 'Destination id']], body: { config: { type: 'object' }, replace_config: { type: 'boolean' }, name: { type: 'string' }, enabled: { type: 'boolean' } },
    errors: { '400': 'INVALID_VALUE', '404': 'NOT_FOUND' },
  },
  { method: 'delete', path: '/admin/destinations/{id}', summary: 'Disconnect a destination (its pending deliveries are skipped)', params: [['id', 'path', 'string', 'Destination id']], errors: { '404': 'NOT_FOUND' } },
  {
    method: 'get', path: '/admin/deliveries', summary: 'Deliveries, newest first',
    params: [['script_id', 'query', 'string', 'Account'], ['status', 'query', 'string', 'pending, delivered, failed, dead or skipped'], ['event_id', 'query', 'string', 'event.id'], ['destination_id', 'query', 'string', 'Destination'], ...page],
    errors: { '400': 'INVALID_VALUE' },
  },
  { method: 'get', path: '/admin/deliveries/{id}', summary: 'One delivery with every attempt', params: [['id', 'path', 'integer', 'Delivery id']], errors: { '404': 'NOT_FOUND' } },
  {
    method: 'post', path: '/admin/deliveries/replay', summary: 'Re-queue failed and dead deliveries matching the filter (delivered ones only with force): scoped to script_id or destination_id unless all is true, at most MAX_REPLAY per call (left says how many remain); dry_run counts and changes nothing',
    body: { script_id: { type: 'string' }, destination_id: { type: 'string' }, all: { type: 'boolean' }, dry_run: { type: 'boolean' }, event_id: { type: 'string' }, since: { type: 'integer' }, statuses: { type: 'array', items: { enum: ['failed', 'dead', 'delivered'] } }, force: { type: 'boolean' } },
    errors: { '400': 'INVALID_VALUE or REQUIRED_FIELD_MISSING (no scope and no all)', '409': 'CONFLICT: delivered without force' },
  },
  { method: 'post', path: '/admin/deliveries/retry-now', summary: 'Pending retries due now (script_id, destination_id or all required)', body: { script_id: { type: 'string' }, destination_id: { type: 'string' }, all: { type: 'boolean' } } },
  {
    method: 'get', path: '/admin/events', summary: 'Stored events, newest first; each with error_count, warning_count and first_error_code (the issues come with one event)',
    params: [
      ['script_id', 'query', 'string', 'Account'], ['name', 'query', 'string', 'Event name'],
      ['status', 'query', 'string', 'accepted, rejected or duplicate'], ['event_id', 'query', 'string', 'event.id (for orders the order number) or tracklane id'],
      ['since', 'query', 'integer', 'received_at ≥ (ms)'], ['until', 'query', 'integer', 'received_at < (ms)'], ...page,
    ],
    errors: { '400': 'INVALID_VALUE / OUT_OF_RANGE: a filter is malformed' },
  },
  {
    method: 'get', path: '/admin/events/{id}', summary: 'One event traced: payload, deliveries, native requests (masked), attempts; user identifiers masked unless revealed',
    params: [['id', 'path', 'string', 'tracklane id'], ['reveal', 'query', 'string', 'identifiers: answer them clear (logged as an admin reveal)']], errors: { '400': 'INVALID_VALUE', '404': 'NOT_FOUND' },
  },
  { method: 'get', path: '/admin/trace', summary: 'Find events by tracklane id or event.id', params: [['q', 'query', 'string', 'The id to look up'], ['script_id', 'query', 'string', 'Account']] },
  {
    method: 'get', path: '/admin/stream', summary: 'Server-Sent Events: one `intake` message per stored event (this instance)', stream: true,
    params: [['script_id', 'query', 'string', 'Account'], ['status', 'query', 'string', 'accepted, rejected or duplicate'], ['name', 'query', 'string', 'Event name']],
  },
  { method: 'get', path: '/admin/destinations', summary: 'Destinations with delivery counts, oldest pending, pause state, last error', params: [['script_id', 'query', 'string', 'Account']] },
  { method: 'post', path: '/admin/destinations/{id}/resume', summary: 'Un-pause and make the backlog due now', params: [['id', 'path', 'string', 'Destination id']], errors: { '404': 'NOT_FOUND' } },
  {
    method: 'post', path: '/admin/deliveries/{id}/replay', summary: 'Re-queue a failed or dead delivery (a delivered one only with force)',
    params: [['id', 'path', 'integer', 'Delivery id']], body: { force: { type: 'boolean' } }, errors: { '404': 'NOT_FOUND', '409': 'CONFLICT: pending, skipped, or delivered without force' },
  },
  { method: 'get', path: '/admin/customers', summary: 'Loaded custom endpoints with their bound accounts, examples, and versions with their pinned accounts and uses' },
  {
    method: 'post', path: '/admin/customers/{customer}/endpoints/{endpoint}/test', summary: 'Run a custom endpoint in test mode (nothing stored or sent)',
    params: [['customer', 'path', 'string', 'Customer slug'], ['endpoint', 'path', 'string', 'Endpoint name']],
    body: {
      script_id: { type: 'string' }, body: { description: "Request body; default the version's example" },
      version: { type: ['integer', 'string'], description: "Endpoint version, as X-Service-Endpoint-Version names it; default the account's pin, else the current one" },
    }, required: ['script_id'],
    errors: { '400': 'CUSTOM_VALIDATION_ERROR', '404': 'NOT_FOUND' },
  },
  { method: 'get', path: '/admin/rules', summary: 'Every (scope, destination) with its live source and version' },
  { method: 'get', path: '/admin/rules/{destination}', summary: 'The live rule document', params: [destination, scope], errors: { '404': 'NOT_FOUND' } },
  { method: 'get', path: '/admin/rules/{destination}/history', summary: 'Publishes, rollbacks and reverts, newest first', params: [destination, scope] },
  { method: 'get', path: '/admin/rules/versions/{version}', summary: 'One stored version', params: [['version', 'path', 'integer', 'Version number']], errors: { '404': 'NOT_FOUND' } },
  { method: 'post', path: '/admin/rules/{destination}/check', summary: 'Check a draft exactly as loading does', params: [destination], body: draft, required: ['document'] },
  { method: 'post', path: '/admin/rules/{destination}/diff', summary: 'Rule-by-rule diff of a draft against the live version', params: [destination], body: draft, required: ['document'] },
  {
    method: 'post', path: '/admin/rules/{destination}/preview', summary: 'Native requests before (live) and after (draft) for a stored or pasted event',
    params: [destination], body: { ...draft, event_id: { type: 'string' }, payload: { type: 'object' } }, required: ['document'],
    errors: { '404': 'NOT_FOUND: no stored event with that id', '422': 'RULES_INVALID', '429': 'RATE_LIMITED: too many draft runs waiting', '503': 'UNAVAILABLE: the run passed its time limit' },
  },
  {
    method: 'post', path: '/admin/rules/{destination}/replay', summary: 'Replay through a draft: how many native requests of the last N stored events the draft would change',
    params: [destination], body: { ...draft, last: { type: 'integer', minimum: 1, maximum: 500 }, script_id: { type: 'string' } }, required: ['document'],
    errors: { '400': 'OUT_OF_RANGE', '409': 'CONFLICT: a replay is already running', '422': 'RULES_INVALID', '429': 'RATE_LIMITED: too many draft runs waiting', '503': 'UNAVAILABLE: the run passed its time limit' },
  },
  {
    method: 'post', path: '/admin/rules/{destination}/publish', summary: 'Store a checked draft as a new live version', created: true,
    params: [destination], body: { ...draft, message: { type: 'string' } }, required: ['document', 'message'],
    errors: { '422': 'RULES_INVALID (error.details.errors lists path and message)' },
  },
  {
    method: 'post', path: '/admin/rules/{destination}/rollback', summary: 'Make an earlier version live again',
    params: [destination], body: { scope: { type: 'string' }, version: { type: 'integer' }, message: { type: 'string' } }, required: ['version'],
    errors: { '404': 'NOT_FOUND', '422': 'RULES_INVALID' },
  },
  {
    method: 'post', path: '/admin/rules/{destination}/revert', summary: 'No published version live for the scope: its file or plugin default serves again',
    params: [destination], body: { scope: { type: 'string' }, message: { type: 'string' } },
    errors: { '409': 'CONFLICT: no published version is live there', '422': 'RULES_INVALID' },
  },
];

const json = (schema: object) => ({ content: { 'application/json': { schema } } });
const ERROR = json({ $ref: '#/components/schemas/AdminError' });

function operation(op: Op): object {
  return {
    summary: op.summary,
    tags: ['admin'],
    security: [{ adminToken: [] }],
    parameters: (op.params ?? []).map(([name, where, type, description]) => ({ name, in: where, required: where === 'path', schema: { type }, description })),
    ...(op.body ? { requestBody: { required: true, ...json({ type: 'object', properties: op.body, required: op.required ?? [] }) } } : {}),
    responses: {
      [op.created ? '201' : '200']: op.stream
        ? { description: 'text/event-stream', content: { 'text/event-stream': { schema: { type: 'string' } } } }
        : { description: 'OK', ...json({ type: 'object' }) },
      '401': { description: 'AUTH_MISSING or INVALID_CREDENTIALS (ADMIN_TOKEN)', ...ERROR },
      ...Object.fromEntries(Object.entries(op.errors ?? {}).map(([code, description]) => [code, { description, ...ERROR }])),
    },
  };
}

/** `doc` (the intake's OpenAPI document) with the admin paths, schemes and error shape added. */
export function withAdminPaths(doc: Record<string, any>): Record<string, any> {
  const paths: Record<string, Record<string, object>> = { ...doc.paths };
  for (const op of OPS) paths[op.path] = { ...paths[op.path], [op.method]: operation(op) };
  return {
    ...doc,
    info: { ...doc.info, description: `${doc.info?.description ?? ''} Admin API under /admin (bearer ADMIN_TOKEN; 404 when unset).`.trim() },
    paths,
    components: {
      ...doc.components,
      securitySchemes: { ...doc.components?.securitySchemes, adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' } },
      schemas: {
        ...doc.components?.schemas,
        AdminError: {
          type: 'object', required: ['error'],
          properties: { error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' }, details: {} } } },
        },
      },
    },
  };
}
