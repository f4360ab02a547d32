// `tracklane plugins new TYPE`: writes a working destination folder — settings, native event
// schema, default rules, request builder, reply classifier, example settings, a golden test of
// the documented example request, unit tests and a README — into the first plugin folder
// listed (PLUGINS_DIR, else the shipped plugins/), then loads it with the real loader, so what
// was scaffolded is known to start. Its files import the service only as `tracklane/sdk` and
// `tracklane/sdk/testing`: the folder works wherever it lives, and its tests run with
// `npx tracklane test FOLDER`. The platform it talks to is a placeholder to replace.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isEsmScope } from '../customers/load-customers.ts';
import { loadPluginFolder, NAME_RE, pluginFoldersIn, type PluginFolders } from './load-plugins.ts';

export class PluginScaffoldError extends Error {
  override name = 'PluginScaffoldError';
}

export interface ScaffoldedPlugin {
  type: string;
  folder: string;
  files: string[];
}

/** A TypeScript identifier from the type: `acme-ads` → `AcmeAds`. */
const pascal = (type: string): string => type.split('-').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');

const json = (v: unknown): string => `${JSON.stringify(v, null, 2)}\n`;

/** The documented example: this payload, with the example settings, becomes exactly EXAMPLE_REQUEST (README and golden test). */
const EXAMPLE_PAYLOAD = {
  event: { name: 'checkout_completed', id: 'ORD-1001', value: 59.9, currency: 'EUR' },
  context: { environment: 'prod', data_source: 'website', url: 'https://shop.example/thanks' },
  products: [{ id: 'SKU-1', name: 'Lamp', category: 'Home', price_base: 59.9, price: 59.9, quantity: 1, tax_percent: 19 }],
  user: { email: ' Jane.Doe@Example.com ' },
  consent: { analytics: true, personalization: true, marketing: true },
};
/** SHA-256 of `jane.doe@example.com`, the example's e-mail in its normal form. */
const EXAMPLE_EMAIL_HASH = '86e0b9e56c17cc4d12387e1949b85053fbe73bc3ce5a1188713a9d300cc6133d';
const RECEIVED_AT = 1_760_000_000_000;

function settingsTs(type: string): string {
  return `// Settings of the ${type} destination, written once: the draft-07 schema operators'
// \`destinations add --config\` is checked against, and the type derived from it.
import { COMMON_SETTINGS_PROPERTIES, type SettingsOf } from 'tracklane/sdk';

/** The platform's API base URL; \`endpoint\` in the settings replaces it (a sandbox, a test double). */
export const DEFAULT_ENDPOINT = 'https://api.example.com';

export const settingsSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['account_id', 'api_key'],
  additionalProperties: false,
  properties: {
    account_id: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'the account events are sent to' },
    api_key: { type: 'string', minLength: 1, pattern: '^\\\\S+$', description: 'sent as a bearer token (secret)' },
    ...COMMON_SETTINGS_PROPERTIES,
  },
} as const;

export type ${pascal(type)}Settings = SettingsOf<typeof settingsSchema>;
`;
}

function nativeSchemaTs(type: string): string {
  return `// JSON Schema (draft-07) of one ${type} native event as the rules must produce it. The envelope
// (event_id, event_time, user) is the plugin's to add, so rules may not write it; a key the
// platform does not know is refused rather than sent.
export const nativeSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  required: ['event_name'],
  additionalProperties: false,
  properties: {
    event_name: { type: 'string', enum: ['purchase', 'lead'] },
    value: { type: 'number', minimum: 0 },
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    order_id: { type: 'string', minLength: 1 },
  },
};
`;
}

function rulesJson(type: string): unknown {
  return {
    destination: type,
    rules: [
      {
        id: `${type}.purchase`,
        event: 'checkout_completed',
        description: 'a purchase with its value, currency and order id',
        output: { event_name: 'purchase', value: { var: 'event.value' }, currency: { var: 'event.currency' }, order_id: { var: 'event.id' } },
      },
      { id: `${type}.lead`, event: 'lead_created', description: 'a lead', output: { event_name: 'lead' } },
    ],
  };
}

function buildRequestsTs(type: string): string {
  const settings = `${pascal(type)}Settings`;
  return `// ${type} requests: one POST per batch of events to \`{endpoint}/v1/accounts/{account_id}/events\`
// with a bearer token. The rule gives event_name, value, currency and order_id; this module adds
// the envelope: event_id, event_time (seconds) and user (the hashed identifiers).
import { baseUrl, chunk, expandBranch, mergeDotPaths, type BuildInput, type OutboundRequest, type OutgoingItem } from 'tracklane/sdk';
import { DEFAULT_ENDPOINT, type ${settings} } from './settings.ts';

export const MAX_EVENTS = 100;

export function buildRequests({ settings, items }: BuildInput<${settings}>): OutboundRequest[] {
  const url = \`\${baseUrl(settings.endpoint, DEFAULT_ENDPOINT)}/v1/accounts/\${encodeURIComponent(settings.account_id)}/events\`;
  return chunk(items, MAX_EVENTS).map((group) => ({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', authorization: \`Bearer \${settings.api_key}\` },
    body: JSON.stringify({ events: group.map(nativeEvent) }),
    eventIds: group.map((i) => i.eventId),
  }));
}

/** One \`events[]\` element: the envelope, then the rule's fields merged over it. */
function nativeEvent(item: OutgoingItem): Record<string, unknown> {
  const event: Record<string, unknown> = { event_id: item.eventId, event_time: Math.floor(item.receivedAt / 1000) };
  const user = expandBranch(item.identifiers, 'user');
  if (Object.keys(user).length > 0) event.user = user;
  return mergeDotPaths(event, item.native.fields);
}
`;
}

function classifyResponseTs(type: string): string {
  return `// The ${type} reply → success / retryable / permanent: 2xx is a success, 408, 429 and 5xx are
// retried (after Retry-After when given), every other status is final, with the platform's
// message when its body has one.
import { classifyHttpStatus, isSuccessStatus, retryAfterMs, type Classification, type PlatformResponse } from 'tracklane/sdk';

export function classifyResponse(res: PlatformResponse): Classification {
  if (isSuccessStatus(res.status)) return { outcome: 'success' };
  const message = errorMessage(res.body);
  const label = \`HTTP \${res.status}\${message === undefined ? '' : \`: \${message}\`}\`;
  return classifyHttpStatus(res.status, label, { redirectNote: ' (redirects are not followed)', retryAfterMs: retryAfterMs(res.headers) });
}

function errorMessage(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { message?: unknown };
    return typeof parsed?.message === 'string' ? parsed.message.slice(0, 300) : undefined;
  } catch {
    return undefined;
  }
}
`;
}

function indexTs(type: string): string {
  const settings = `${pascal(type)}Settings`;
  return `// The ${type} destination, scaffolded by \`tracklane plugins new\`: replace the placeholder API
// (settings.ts, build-requests.ts, classify-response.ts, native-schema.ts, rules.json) with the
// platform's documented one. Its default rules are rules.json in this folder (RULES_DIR may
// override them); the identifiers, consent and the native event schema are declared here.
import { hashedContactTable, type DestinationPlugin } from 'tracklane/sdk';
import { buildRequests, MAX_EVENTS } from './build-requests.ts';
import { classifyResponse } from './classify-response.ts';
import { nativeSchema } from './native-schema.ts';
import { settingsSchema, type ${settings} } from './settings.ts';

const plugin: DestinationPlugin<${settings}> = {
  name: '${type}',
  version: '0.1.0',
  category: 'advertising',
  consent: 'marketing',
  description: '${type}: purchases and leads, batched up to 100 events (scaffolded: describe the platform API here)',
  settingsSchema,
  secretSettings: ['api_key'],
  // The usual contact fields, SHA-256 hashed under user.* (e-mail trimmed and lower-cased, phone E.164, …).
  identifiers: { table: hashedContactTable('user', 1) },
  nativeSchema,
  batch: { maxEvents: MAX_EVENTS },
  buildRequests,
  classifyResponse,
};

export default plugin;
export type { ${settings} } from './settings.ts';
`;
}

function exampleSettingsTs(type: string): string {
  const settings = `${pascal(type)}Settings`;
  return `// Settings that pass this destination's schema, sending to \`endpoint\` (a test double). The
// service's tests that cover every plugin (a request per destination, inputs left unchanged)
// take them from here, so a new destination needs nothing outside its folder.
import type { ${settings} } from './settings.ts';

export default function exampleSettings(endpoint: string): ${settings} {
  return { account_id: 'acct_123', api_key: 'key-example', endpoint };
}
`;
}

function goldenTestTs(type: string): string {
  return `// The documented example (README.md, "Example"), end to end through the service's pipeline:
// the payload validated, this folder's rules applied, the request built — exactly as written.
import { fileURLToPath } from 'node:url';
import { expectOneRequest, expectSkipped, previewEvent } from 'tracklane/sdk/testing';
import exampleSettings from './example-settings.ts';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const RECEIVED_AT = ${RECEIVED_AT};
const settings = exampleSettings('https://api.example.com');

const PAYLOAD = ${JSON.stringify(EXAMPLE_PAYLOAD, null, 2)};

describe('${type} golden: the documented example', () => {
  it('a checkout becomes one purchase with the hashed e-mail', async () => {
    const result = await previewEvent(HERE, PAYLOAD, { settings, receivedAt: RECEIVED_AT, now: RECEIVED_AT });
    expectOneRequest(result, {
      url: 'https://api.example.com/v1/accounts/acct_123/events',
      headers: { 'content-type': 'application/json', authorization: 'Bearer key-example' },
      eventId: 'ORD-1001',
      body: {
        events: [{
          event_id: 'ORD-1001',
          event_time: ${Math.floor(RECEIVED_AT / 1000)},
          user: { em: '${EXAMPLE_EMAIL_HASH}' },
          event_name: 'purchase',
          value: 59.9,
          currency: 'EUR',
          order_id: 'ORD-1001',
        }],
      },
    });
  });

  it('an event no rule maps is skipped', async () => {
    const result = await previewEvent(HERE, { ...PAYLOAD, event: { name: 'order_canceled', id: 'ORD-1001' } }, { settings, receivedAt: RECEIVED_AT, now: RECEIVED_AT });
    expectSkipped(result, 'no_matching_rule');
  });
});
`;
}

function unitTestTs(type: string): string {
  return `// The ${type} plugin on its own: it loads as the service loads it, its settings schema, and
// replies classified.
import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { loadPluginFolder, outcomeCases, reply, settingsSchemaCases } from 'tracklane/sdk/testing';
import exampleSettings from './example-settings.ts';
import { classifyResponse } from './classify-response.ts';
import plugin from './index.ts';

const HERE = fileURLToPath(new URL('.', import.meta.url));

describe('${type} plugin', () => {
  it('loads from its folder like any plugin; its example settings pass its schema', async () => {
    const loaded = await loadPluginFolder(HERE);
    expect(loaded.plugin.name).to.equal('${type}');
    expect(loaded.validateSettings(exampleSettings('https://api.example.com'))).to.deep.equal([]);
  });

  describe('settings schema', () => {
    settingsSchemaCases(plugin.settingsSchema, {
      accepts: [['the example settings', exampleSettings('https://api.example.com')]],
      refuses: [
        ['no api_key', { account_id: 'acct_123' }],
        ['an unknown key', { ...exampleSettings('https://api.example.com'), colour: 'red' }],
      ],
    });
  });

  describe('replies', () => {
    outcomeCases(classifyResponse, [
      ['200', reply(200, { ok: true }), 'success'],
      ['400 with a message', reply(400, { message: 'bad event' }), 'permanent'],
      ['429 with Retry-After', reply(429, '', { 'retry-after': '30' }), 'retryable', 30_000],
      ['503', reply(503), 'retryable'],
      ['302', reply(302), 'permanent'],
    ]);
  });
});
`;
}

function readme(type: string): string {
  return `# ${type}

Scaffolded by \`npx tracklane plugins new ${type}\`: a working destination against a placeholder
API. Replace the placeholder with the platform's documented API (cite its public docs here),
keep the tests passing, and fill in this README.

## Configuration

| Key | Required | Meaning |
|---|---|---|
| \`account_id\` | yes | the account events are sent to |
| \`api_key\` | yes | bearer token (secret: masked wherever settings are shown) |
| \`endpoint\`, \`events\`, \`consent_category\`, \`max_concurrency\`, \`timeout_ms\`, \`test_event_code\` | no | what every destination takes (see the main README, "Destinations and mapping rules") |

Gated by \`consent.marketing\` unless \`consent_category\` says otherwise.

## What it sends

\`POST {endpoint}/v1/accounts/{account_id}/events\` with \`Authorization: Bearer {api_key}\`, up to
100 events a request: \`{"events": [...]}\`, each with \`event_id\`, \`event_time\` (seconds),
\`user\` (the hashed identifiers) and what the rules produce (\`native-schema.ts\`).

| Event | Native event (rules.json) |
|---|---|
| \`checkout_completed\` | \`purchase\` with \`value\`, \`currency\`, \`order_id\` |
| \`lead_created\` | \`lead\` |

Identifiers: e-mail, phone, names, city, region, postal code, country and external id,
normalised and SHA-256 hashed under \`user.em\`, \`user.ph\`, … (the SDK's \`hashedContactTable\`).

Replies: 2xx success; 408, 429 and 5xx retried (after \`Retry-After\` when given); any other
status final, with the body's \`message\`.

## Example

With the settings of \`example-settings.ts\` (\`{"account_id": "acct_123", "api_key": "key-example"}\`),
this event, received at ${new Date(RECEIVED_AT).toISOString()}:

\`\`\`json
${JSON.stringify(EXAMPLE_PAYLOAD, null, 2)}
\`\`\`

is sent as:

\`\`\`http
POST https://api.example.com/v1/accounts/acct_123/events
content-type: application/json
authorization: Bearer key-example

{"events":[{"event_id":"ORD-1001","event_time":${Math.floor(RECEIVED_AT / 1000)},"user":{"em":"${EXAMPLE_EMAIL_HASH}"},"event_name":"purchase","value":59.9,"currency":"EUR","order_id":"ORD-1001"}]}
\`\`\`

\`golden.test.ts\` holds this example to the code.

## Files

\`index.ts\` (the definition), \`settings.ts\`, \`native-schema.ts\`, \`rules.json\` (default rules),
\`build-requests.ts\`, \`classify-response.ts\`, \`example-settings.ts\` (settings the service's own
tests use for every destination), \`golden.test.ts\`, \`${type}.test.ts\`. They import the service only
as \`tracklane/sdk\` and \`tracklane/sdk/testing\` (docs/sdk.md), so this folder works wherever it lives.

## Tests

From the tracklane checkout, wherever this folder lives: \`npx tracklane test <this folder>\` (the
service's own mocha and tsx; nothing to install here). Inside the checkout's own \`plugins/\`,
\`npm test\` runs them with the rest.
`;
}

/** Writes <type>/ into `intoDir` (Config.newPluginsDir), refusing a type any of `pluginsDirs` already has; loads it before keeping it. */
export async function scaffoldPlugin(intoDir: string, pluginsDirs: PluginFolders, type: string): Promise<ScaffoldedPlugin> {
  if (!NAME_RE.test(type)) throw new PluginScaffoldError(`TYPE must be 2 to 40 lowercase letters, digits and dashes, starting with a letter, got "${type}"`);
  const taken = pluginFoldersIn(pluginsDirs).get(type);
  if (taken !== undefined) throw new PluginScaffoldError(`the plugin type "${type}" is already ${taken}; pick another name`);
  const folder = join(intoDir, type);
  if (existsSync(folder)) throw new PluginScaffoldError(`${folder} already exists; pick another name`);
  mkdirSync(folder, { recursive: true });
  // Plugins are ES modules; a folder outside this package needs to say so.
  if (!isEsmScope(intoDir)) writeFileSync(join(intoDir, 'package.json'), json({ private: true, type: 'module' }));
  const files: Record<string, string> = {
    'index.ts': indexTs(type),
    'settings.ts': settingsTs(type),
    'native-schema.ts': nativeSchemaTs(type),
    'rules.json': json(rulesJson(type)),
    'build-requests.ts': buildRequestsTs(type),
    'classify-response.ts': classifyResponseTs(type),
    'example-settings.ts': exampleSettingsTs(type),
    'golden.test.ts': goldenTestTs(type),
    [`${type}.test.ts`]: unitTestTs(type),
    'README.md': readme(type),
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, name), text);
  try {
    await loadPluginFolder(folder);
  } catch (e) {
    rmSync(folder, { recursive: true, force: true });
    throw new PluginScaffoldError(`the scaffolded plugin does not load, nothing was kept: ${(e as Error).message}`);
  }
  return { type, folder, files: Object.keys(files) };
}
