// Loads every custom endpoint under CUSTOMERS_DIR (customers/<slug>/endpoints/<name>/) and
// checks it: schema compiles, endpoint.json is valid, example.json passes the schema, the
// auth can be built, handler.ts default-exports a function. A broken folder stops start
// with its path named; a new endpoint is one new folder, with nothing to register.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { compileBodySchema, type BodyValidator } from './body-validator.ts';
import { checkEndpointConfig, type EndpointConfig } from './endpoint-config.ts';
import { buildEndpointAuth } from './auth/endpoint-auth.ts';
import type { CustomerRegistry, CustomHandler, LoadedEndpoint } from './types.ts';
import { loadModule } from '../load-module.ts';

export class CustomerLoadError extends Error {
  override name = 'CustomerLoadError';
  constructor(
    readonly folder: string,
    reason: string,
  ) {
    super(`custom endpoint ${folder}: ${reason}`);
  }
}

/** Customer slugs, as `accounts update --customer` accepts them. */
export const CUSTOMER_SLUG_RE = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** Endpoint names: one path segment of /service/custom/<name>. */
export const ENDPOINT_NAME_RE = /^[a-z0-9][a-z0-9-]{0,62}$/;
export const ENDPOINT_FILES = ['schema.json', 'endpoint.json', 'handler.ts', 'example.json', 'README.md'] as const;

export interface LoadCustomersOptions {
  /** Where endpoint.json's *_env variables are read; process.env by default. */
  env?: NodeJS.ProcessEnv;
}

/** Whether the nearest package.json above `dir` declares ES modules, as handler.ts needs. */
export function isEsmScope(dir: string): boolean {
  for (let d = dir; ; d = dirname(d)) {
    const pkg = join(d, 'package.json');
    if (existsSync(pkg)) {
      try {
        return (JSON.parse(readFileSync(pkg, 'utf8')) as { type?: unknown }).type === 'module';
      } catch {
        return false;
      }
    }
    if (dirname(d) === d) return false;
  }
}

export const subfolders = (dir: string): string[] =>
  readdirSync(dir).filter((f) => !f.startsWith('.') && statSync(join(dir, f)).isDirectory()).sort();

function readJson(folder: string, file: string): unknown {
  const text = readFileSync(join(folder, file), 'utf8');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new CustomerLoadError(folder, `${file} is not valid JSON: ${(e as Error).message}`);
  }
}

/** Loads and checks one endpoint folder (`customers new` checks what it wrote with this). */
export async function loadEndpoint(
  folder: string, customer: string, name: string, env: NodeJS.ProcessEnv = process.env,
  /** A new value makes handler.ts load afresh (module caches are per URL): a folder retried after an edit. */
  version?: string,
): Promise<LoadedEndpoint> {
  if (!ENDPOINT_NAME_RE.test(name)) throw new CustomerLoadError(folder, 'the folder name must be lowercase letters, digits and dashes');
  const missing = ENDPOINT_FILES.filter((f) => !existsSync(join(folder, f)));
  if (missing.length > 0) throw new CustomerLoadError(folder, `missing ${missing.join(', ')}`);

  const schema = readJson(folder, 'schema.json');
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema) || (schema as { type?: unknown }).type !== 'object') {
    throw new CustomerLoadError(folder, 'schema.json must be a JSON Schema with "type": "object" (the body is a JSON object)');
  }
  let validateBody: BodyValidator;
  try {
    validateBody = compileBodySchema(schema as Record<string, unknown>);
  } catch (e) {
    throw new CustomerLoadError(folder, `schema.json does not compile: ${(e as Error).message}`);
  }

  const config = readJson(folder, 'endpoint.json');
  const problems = checkEndpointConfig(config);
  if (problems.length > 0) throw new CustomerLoadError(folder, `endpoint.json: ${problems.join('; ')}`);

  const example = readJson(folder, 'example.json');
  const exampleProblems = validateBody(example);
  if (exampleProblems.length > 0) {
    throw new CustomerLoadError(folder, `example.json does not pass schema.json: ${exampleProblems.map((p) => p.message).join('; ')}`);
  }

  const cfg = config as EndpointConfig;
  let auth;
  try {
    auth = await buildEndpointAuth(cfg.auth ?? [], env);
  } catch (e) {
    throw new CustomerLoadError(folder, `endpoint.json: ${(e as Error).message}`);
  }

  let mod: { default?: unknown };
  try {
    mod = (await loadModule(join(folder, 'handler.ts'), version)) as { default?: unknown };
  } catch (e) {
    const hint = isEsmScope(folder) ? '' : ` (handlers are ES modules: give ${dirname(dirname(dirname(folder)))} a package.json with {"type": "module"})`;
    throw new CustomerLoadError(folder, `handler.ts failed to load: ${(e as Error).message}${hint}`);
  }
  if (typeof mod.default !== 'function') throw new CustomerLoadError(folder, 'handler.ts must default-export a function (body, ctx) => result');

  return {
    customer,
    name,
    folder,
    config: cfg,
    schema: schema as Record<string, unknown>,
    example,
    validateBody,
    auth,
    handler: mod.default as CustomHandler<any>,
    warnings: inlineSecretWarnings(customer, cfg.auth ?? []),
  };
}

/** Loads `dir` (missing: nothing to load). Throws CustomerLoadError naming the first broken folder. */
export async function loadCustomers(dir: string, opts: LoadCustomersOptions = {}): Promise<CustomerRegistry> {
  const env = opts.env ?? process.env;
  const registry = new Map<string, Map<string, LoadedEndpoint>>();
  if (!existsSync(dir)) return registry;
  for (const customer of subfolders(dir)) {
    const customerDir = join(dir, customer);
    if (!CUSTOMER_SLUG_RE.test(customer)) {
      throw new CustomerLoadError(customerDir, 'the customer folder name must be a slug of lowercase letters, digits and dashes');
    }
    const endpointsDir = join(customerDir, 'endpoints');
    if (!existsSync(endpointsDir) || !statSync(endpointsDir).isDirectory()) {
      throw new CustomerLoadError(customerDir, 'has no endpoints/ folder');
    }
    const endpoints = new Map<string, LoadedEndpoint>();
    for (const name of subfolders(endpointsDir)) {
      endpoints.set(name, await loadEndpoint(join(endpointsDir, name), customer, name, env));
    }
    registry.set(customer, endpoints);
  }
  return registry;
}

/** Every loaded endpoint, by customer then name. */
export function listEndpoints(registry: CustomerRegistry): LoadedEndpoint[] {
  return [...registry.values()].flatMap((m) => [...m.values()]);
}

/** The customer whose inline secrets are expected: the public demo. */
export const DEMO_CUSTOMER = 'demo';

/** Inline `secret` / `public_key` outside the demo: they belong in an environment variable. */
export function inlineSecretWarnings(customer: string, auth: readonly unknown[]): string[] {
  if (customer === DEMO_CUSTOMER) return [];
  return auth.flatMap((a, i) => {
    const m = a as { type?: string; secret?: unknown };
    return typeof m.secret === 'string'
      ? [`endpoint.json auth[${i}] (${m.type}) has its secret inline; put it in an environment variable and name it with secret_env`]
      : [];
  });
}
