// `tracklane customers new-version SLUG ENDPOINT`: the next version of an endpoint, copied
// from the current one (schema, example, handler with its relative imports rebased) into
// versions/<n>/ and listed `active` in endpoint.json, so it answers requests that name it
// while every other client keeps the shape it has. Loaded with the real loader before it is kept.
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { CUSTOMER_SLUG_RE, customerFolder, type CustomerFolders } from './load-customers.ts';
import { ENDPOINT_NAME_RE, loadEndpoint } from './load-endpoint.ts';
import { readEndpointPlan, VERSIONS_DIR } from './endpoint-versions.ts';
import { importPath, ScaffoldError } from './scaffold.ts';

export interface NewVersion {
  customer: string;
  endpoint: string;
  /** The version written, and the one it was copied from (the current one, which stays current). */
  version: number;
  from: number;
  folder: string;
  files: string[];
}

/** Relative import specifiers of `source`, written in `fromDir`, rewritten for a copy in `toDir`. */
export function rebaseImports(source: string, fromDir: string, toDir: string): string {
  return source.replace(/(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"\n]+)\2/g,
    (_all, lead: string, quote: string, spec: string) => `${lead}${quote}${importPath(toDir, resolve(fromDir, spec))}${quote}`);
}

/** The next version of `customer`/`endpoint`, in whichever of `customersDirs` holds the customer. */
export async function addEndpointVersion(customersDirs: CustomerFolders, customer: string, endpoint: string): Promise<NewVersion> {
  if (!CUSTOMER_SLUG_RE.test(customer)) throw new ScaffoldError(`SLUG must be lowercase letters, digits and dashes, got "${customer}"`);
  if (!ENDPOINT_NAME_RE.test(endpoint)) throw new ScaffoldError(`ENDPOINT must be lowercase letters, digits and dashes, got "${endpoint}"`);
  const customerDir = customerFolder(customersDirs, customer);
  if (customerDir === undefined) throw new ScaffoldError(`no customer folder "${customer}" in ${[customersDirs].flat().join(', ')} (customers new ${customer} ${endpoint} makes it)`);
  const folder = join(customerDir, 'endpoints', endpoint);
  if (!existsSync(folder)) throw new ScaffoldError(`${folder} does not exist (customers new ${customer} ${endpoint} makes it)`);
  const plan = readEndpointPlan(folder);
  if (typeof plan === 'string') throw new ScaffoldError(`${folder}: ${plan}; fix it first`);
  const from = plan.versions.find((v) => v.version === plan.current)!;
  const version = Math.max(...plan.versions.map((v) => v.version)) + 1;
  const dir = join(folder, VERSIONS_DIR, String(version));
  if (existsSync(dir)) throw new ScaffoldError(`${dir} already exists`);

  const configFile = join(folder, 'endpoint.json');
  const configText = readFileSync(configFile, 'utf8');
  const config = JSON.parse(configText) as Record<string, unknown>;
  const versions = { ...(config.versions as Record<string, unknown> | undefined), [String(version)]: { state: 'active' } };
  const next = { ...config, current_version: plan.current, versions };

  mkdirSync(dir, { recursive: true });
  copyFileSync(join(from.dir, 'schema.json'), join(dir, 'schema.json'));
  copyFileSync(join(from.dir, 'example.json'), join(dir, 'example.json'));
  writeFileSync(join(dir, 'handler.ts'), rebaseImports(readFileSync(join(from.dir, 'handler.ts'), 'utf8'), from.dir, dir));
  writeFileSync(configFile, `${JSON.stringify(next, null, 2)}\n`);
  try {
    await loadEndpoint(folder, customer, endpoint, { fresh: randomUUID() });
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    writeFileSync(configFile, configText);
    throw new ScaffoldError(`version ${version} does not load, nothing was kept: ${(e as Error).message}`);
  }
  const rel = `${VERSIONS_DIR}/${version}`;
  return { customer, endpoint, version, from: from.version, folder: dir, files: [`${rel}/schema.json`, `${rel}/handler.ts`, `${rel}/example.json`, 'endpoint.json'] };
}
