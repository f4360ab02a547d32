// Throwaway customer folders for tests: a valid endpoint by default, any file replaceable,
// so each test states only what it changes.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/test-server.ts';
import { scaffoldEndpoint } from '../../src/customers/scaffold.ts';

export interface EndpointFiles {
  schema?: unknown;
  config?: unknown;
  handler?: string;
  example?: unknown;
  readme?: string | null;
  /** Extra files by name. */
  extra?: Record<string, string>;
}

export const FIXTURE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['n'],
  properties: { n: { type: 'integer', minimum: 1, maximum: 99 }, note: { type: 'string', maxLength: 10 } },
};

/** One lead_created per request, event.id L-<n>, and one record. */
export const FIXTURE_HANDLER = `
export default function handler(body: { n: number }, ctx: { env: string }) {
  return {
    events: [{ event: { name: 'lead_created', id: 'L-' + body.n }, context: { environment: 'prod', data_source: 'crm' }, consent: { analytics: true, personalization: true, marketing: true } }],
    records: [{ type: 'fixture_row', key: 'n' + body.n, data: { n: body.n, env: ctx.env } }],
    messages: ['got ' + body.n],
    recordsProcessed: 1,
  };
}
`;

/** Writes customers/<customer>/endpoints/<name>/ under `root`; returns the endpoint folder. */
export function writeEndpoint(root: string, customer: string, name: string, files: EndpointFiles = {}): string {
  const dir = join(root, customer, 'endpoints', name);
  mkdirSync(dir, { recursive: true });
  const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v, null, 2));
  writeFileSync(join(dir, 'schema.json'), text(files.schema ?? FIXTURE_SCHEMA));
  writeFileSync(join(dir, 'endpoint.json'), text(files.config ?? { description: `fixture ${name}` }));
  writeFileSync(join(dir, 'handler.ts'), files.handler ?? FIXTURE_HANDLER);
  writeFileSync(join(dir, 'example.json'), text(files.example ?? { n: 1 }));
  if (files.readme !== null) writeFileSync(join(dir, 'README.md'), files.readme ?? `# ${name}\n`);
  for (const [f, t] of Object.entries(files.extra ?? {})) writeFileSync(join(dir, f), t);
  return dir;
}

export const customersRoot = (): string => tempDir('tl-customers-');

/** The customers that ship in the project's customers/ folder. */
export const SHIPPED_CUSTOMERS = ['demo'];

/**
 * A customers folder as an operator's has it after customers/README.md's first step: the
 * shipped customers (linked, so their handlers' relative imports still resolve) and
 * acme/lead-sync scaffolded beside them. Tests that list endpoints run on it rather than on
 * the project's own folder, whose contents are the operator's, and must find the shipped
 * ones among whatever else is there.
 */
export async function customersWithScaffold(): Promise<string> {
  const root = customersRoot();
  const project = fileURLToPath(new URL('../../customers', import.meta.url));
  for (const slug of SHIPPED_CUSTOMERS) symlinkSync(join(project, slug), join(root, slug), 'dir');
  await scaffoldEndpoint(root, 'acme', 'lead-sync');
  return root;
}
