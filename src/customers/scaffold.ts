// `tracklane customers new SLUG ENDPOINT`: writes a working endpoint folder (endpoint.json,
// README, a test that passes as written, and version 1's schema, handler and example in
// versions/1/), from the templates in templates/ (src/scaffold-template.ts), then loads it with
// the real loader, so what was scaffolded is known to start.
// The files import the service only as `tracklane/sdk` and `tracklane/sdk/testing`, so the
// folder works wherever it lives and moves without edits; `npx tracklane test` runs its test.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { declareEsModules, fillTemplates } from '../scaffold-template.ts';
import { CUSTOMER_SLUG_RE, customerFolder } from './load-customers.ts';
import { ENDPOINT_NAME_RE, loadEndpoint } from './load-endpoint.ts';

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
  declareEsModules(customersDir);
  const files = fillTemplates('customers', {
    'endpoint.json': 'endpoint.json',
    'README.md': 'README.md',
    [`${endpoint}.test.ts`]: 'endpoint.test.ts',
    'versions/1/schema.json': 'schema.json',
    'versions/1/handler.ts': 'handler.ts',
    'versions/1/example.json': 'example.json',
  }, { customer, endpoint });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, name), text);
  try {
    await loadEndpoint(folder, customer, endpoint);
  } catch (e) {
    rmSync(folder, { recursive: true, force: true });
    throw new ScaffoldError(`the scaffolded endpoint does not load, nothing was kept: ${(e as Error).message}`);
  }
  return { customer, endpoint, folder, path: `/service/custom/${endpoint}`, files: Object.keys(files) };
}
