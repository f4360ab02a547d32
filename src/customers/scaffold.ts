// `tracklane customers new SLUG ENDPOINT`: writes a working endpoint folder (endpoint.json,
// README, a test that passes as written, and version 1's schema, handler and example in
// versions/1/), then loads it with the real loader, so what was scaffolded is known to start.
// The files import the service only as `tracklane/sdk` and `tracklane/sdk/testing`, so the
// folder works wherever it lives and moves without edits; `npx tracklane test` runs its test.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { CUSTOMER_SLUG_RE, ENDPOINT_NAME_RE, customerFolder, isEsmScope, loadEndpoint } from './load-customers.ts';

export class ScaffoldError extends Error {
  override name = 'ScaffoldError';
}

export interface Scaffolded {
  customer: string;
  endpoint: string;
  folder: string;
  path: string;
  files: string[];
}

/** A relative import specifier from `fromDir` to `target`, POSIX separators. */
export function importPath(fromDir: string, target: string): string {
  const rel = relative(fromDir, target).split(sep).join('/');
  return rel.startsWith('.') ? rel : `./${rel}`;
}

const json = (v: unknown): string => `${JSON.stringify(v, null, 2)}\n`;

function schema(endpoint: string): unknown {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: `${endpoint} request`,
    description: 'What the customer system sends. Replace these example fields with the agreed ones.',
    type: 'object',
    additionalProperties: false,
    required: ['reference', 'occurred_at'],
    dependentRequired: { value: ['currency'] },
    properties: {
      reference: {
        type: 'string',
        pattern: '^[A-Za-z0-9._-]{1,64}$',
        expectedFormat: "the sender's reference: 1 to 64 letters, digits, dots, dashes or underscores, such as REF-1001",
      },
      occurred_at: { type: 'string', format: 'date-time' },
      email: { type: 'string', format: 'email' },
      value: { type: 'number', minimum: 0 },
      currency: { type: 'string', pattern: '^[A-Z]{3}$', expectedFormat: 'a three-letter ISO 4217 currency code in capitals, such as EUR' },
      consent: {
        type: 'object',
        additionalProperties: false,
        required: ['analytics', 'personalization', 'marketing'],
        properties: { analytics: { type: 'boolean' }, personalization: { type: 'boolean' }, marketing: { type: 'boolean' } },
      },
    },
  };
}

const EXAMPLE = {
  reference: 'REF-1001',
  occurred_at: '2024-05-01T12:00:00Z',
  email: 'jane.doe@example.com',
  value: 25,
  currency: 'EUR',
  consent: { analytics: true, personalization: true, marketing: true },
};

function endpointJson(customer: string, endpoint: string): unknown {
  return {
    description: `${customer}/${endpoint}: replace with one sentence on what this endpoint receives and produces.`,
    auth: [],
    rate_limit: { production: { per_minute: 600 }, test: { per_minute: 1000 } },
    settings: { data_source: 'crm' },
    current_version: 1,
    versions: {},
  };
}

function handler(endpoint: string): string {
  return `// ${endpoint}: turns the validated body into standard events (validated, stored and
// delivered like endpoint 1) and/or custom records. Scaffolded by \`tracklane customers new\`.
import type { CustomHandler, StandardEventPayload } from 'tracklane/sdk';

export interface Body {
  reference: string;
  occurred_at: string;
  email?: string;
  value?: number;
  currency?: string;
  consent?: { analytics: boolean; personalization: boolean; marketing: boolean };
}

const handler: CustomHandler<Body> = (body, ctx) => {
  const event: StandardEventPayload = {
    event: { name: 'lead_created', id: body.reference },
    context: { environment: 'prod', data_source: String(ctx.settings.data_source ?? 'crm') },
  };
  if (body.value !== undefined) {
    event.event.value = body.value;
    event.event.currency = body.currency;
  }
  if (body.email !== undefined) event.user = { email: body.email };
  if (body.consent !== undefined) event.consent = { ...body.consent };
  return {
    events: [event],
    messages: [\`\${body.reference}: lead_created\`],
    recordsProcessed: 1,
  };
};

export default handler;
`;
}

function testFile(customer: string, endpoint: string): string {
  return `// Tests of ${customer}/${endpoint}, scaffolded by \`tracklane customers new\`: over real HTTP,
// in both envs, and one refusal per rule you add to schema.json. Keep them passing.
import { fileURLToPath } from 'node:url';
import { expect, startEndpointHarness, type EndpointHarness } from 'tracklane/sdk/testing';

const DIR = fileURLToPath(new URL('.', import.meta.url));

describe('custom endpoint ${customer}/${endpoint}', () => {
  let h: EndpointHarness;
  before(async () => {
    h = await startEndpointHarness(DIR);
  });
  after(() => h.close());

  it('env=test: example.json is valid, produces lead_created, stores nothing', async () => {
    const r = await h.post(h.example, { env: 'test' });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.result).to.equal('ok');
    // The example sends no context.url: the account host stands in, with a URL_FALLBACK warning.
    expect(r.body.custom_data.validation_status).to.equal('valid_with_warnings');
    expect(r.body.custom_data.records_processed).to.equal(1);
    expect(r.body.custom_data.events.map((e: any) => [e.name, e.status])).to.deep.equal([['lead_created', 'would_accept']]);
    expect(await h.server.running.store.events.list({ scriptId: h.account.scriptId })).to.deep.equal([]);
  });

  it('env=production: example.json is stored and acknowledged', async () => {
    const r = await h.post(h.example);
    expect(r.status, r.text).to.equal(200);
    expect(r.body.messages).to.deep.equal(['REF-1001: lead_created']);
    expect(r.body.custom_data.events).to.deep.equal([{ name: 'lead_created', event_id: 'REF-1001', status: 'accepted' }]);
    const [stored] = await h.server.running.store.events.list({ scriptId: h.account.scriptId });
    expect(stored.source).to.equal('custom:${endpoint}');
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['reference missing', { reference: undefined }, 'reference'],
    ['reference with a space', { reference: 'REF 1' }, 'reference'],
    ['occurred_at not a date-time', { occurred_at: 'yesterday' }, 'occurred_at'],
    ['value without currency', { currency: undefined }, 'currency'],
    ['an unknown field', { colour: 'red' }, 'colour'],
  ];
  for (const [what, change, field] of invalid) {
    it(\`refuses \${what} with 400 naming \${field}\`, async () => {
      const r = await h.post({ ...h.example, ...change }, { env: 'test' });
      expect(r.status, r.text).to.equal(400);
      expect(r.body.error_code).to.equal('CUSTOM_VALIDATION_ERROR');
      expect(r.body.error_context.field).to.equal(field);
      expect(r.body.error_context.expected_format).to.be.a('string').and.not.equal('');
    });
  }
});
`;
}

function readme(customer: string, endpoint: string): string {
  return `# ${customer} / ${endpoint}

\`POST /service/custom/${endpoint}?id=<script_id>&env=production|test\` with the usual
\`Content-Type: application/json\` and \`X-Service-Access-Token\` headers, from an account
on the CUSTOM plan and bound to this folder
(\`npx tracklane accounts update ID --tier CUSTOM --customer ${customer}\`).

## What it receives
Version 1 (current): see \`versions/1/schema.json\`; \`versions/1/example.json\` is a complete
valid request. A client may name the version with the \`X-Service-Endpoint-Version\` header or
\`?version=\`; without one it gets the current version (see customers/README.md, "Changing an
endpoint").

| Field | Type | Required | Notes |
|---|---|---|---|
| reference | string | yes | the sender's id; becomes \`event.id\` (deduplication) |
| occurred_at | date-time | yes | |
| email | e-mail | no | hashed by the service before any destination sees it |
| value, currency | number, ISO 4217 | no | currency required with value |
| consent | object | no | analytics, personalization, marketing |

## What it produces
One \`lead_created\` standard event per request. No custom records.

## Authentication and limits
Script id and access token only (add mechanisms to \`endpoint.json\` → \`auth\`; see
\`customers/README.md\`). Production 600 requests per minute, test 1,000.

## Trying it
From this folder:
\`\`\`sh
curl -sS -X POST "$BASE_URL/service/custom/${endpoint}?id=$SCRIPT_ID&env=test" \\
  -H 'Content-Type: application/json' -H "X-Service-Access-Token: $TOKEN" \\
  --data @versions/1/example.json
\`\`\`

## Tests
\`${endpoint}.test.ts\`, over real HTTP against a test server that serves this folder. From the
tracklane checkout, wherever this folder lives:
\`npx tracklane test <this folder>\` (the service's own mocha and tsx; \`tracklane/sdk\` and chai
need no install here). Inside the checkout's own \`customers/\`, \`npm test\` runs them with the rest once this
folder is \`git add\`ed.
`;
}

/** Where scaffolds go: the customer folders in load order, and the one a new customer is written to (Config). */
export interface CustomerFoldersToWrite {
  customersDirs: readonly string[];
  newCustomersDir: string;
}

/**
 * Writes <customer>/endpoints/<endpoint>/ in the customer's folder when one of the customer
 * folders holds it, else in `newCustomersDir` (`where` as one folder: that folder); refuses to overwrite.
 */
export async function scaffoldEndpoint(where: CustomerFoldersToWrite | string, customer: string, endpoint: string): Promise<Scaffolded> {
  if (!CUSTOMER_SLUG_RE.test(customer)) throw new ScaffoldError(`SLUG must be lowercase letters, digits and dashes, got "${customer}"`);
  if (!ENDPOINT_NAME_RE.test(endpoint)) throw new ScaffoldError(`ENDPOINT must be lowercase letters, digits and dashes, got "${endpoint}"`);
  const { customersDirs, newCustomersDir } = typeof where === 'string' ? { customersDirs: [where], newCustomersDir: where } : where;
  const customerDir = customerFolder(customersDirs, customer) ?? join(newCustomersDir, customer);
  const customersDir = dirname(customerDir);
  const folder = join(customerDir, 'endpoints', endpoint);
  if (existsSync(folder)) throw new ScaffoldError(`${folder} already exists; pick another endpoint name or edit it`);
  const v1 = join(folder, 'versions', '1');
  mkdirSync(v1, { recursive: true });
  // Handlers and tests are ES modules; a CUSTOMERS_DIR outside this package needs to say so.
  if (!isEsmScope(customersDir)) writeFileSync(join(customersDir, 'package.json'), json({ private: true, type: 'module' }));
  const files: Record<string, string> = {
    'endpoint.json': json(endpointJson(customer, endpoint)),
    'README.md': readme(customer, endpoint),
    [`${endpoint}.test.ts`]: testFile(customer, endpoint),
    'versions/1/schema.json': json(schema(endpoint)),
    'versions/1/handler.ts': handler(endpoint),
    'versions/1/example.json': json(EXAMPLE),
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, name), text);
  try {
    await loadEndpoint(folder, customer, endpoint);
  } catch (e) {
    rmSync(folder, { recursive: true, force: true });
    throw new ScaffoldError(`the scaffolded endpoint does not load, nothing was kept: ${(e as Error).message}`);
  }
  return { customer, endpoint, folder, path: `/service/custom/${endpoint}`, files: Object.keys(files) };
}
