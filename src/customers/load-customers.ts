// Loads every custom endpoint under CUSTOMERS_DIR (customers/<slug>/endpoints/<name>/) and
// checks it: endpoint.json is valid, and for each version the schema compiles, example.json
// passes it and handler.ts default-exports a function; the auth can be built. A broken folder stops start
// with its path named; a new endpoint is one new folder, with nothing to register.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { compileBodySchema, type BodyValidator } from './body-validator.ts';
import { checkEndpointConfig, type EndpointConfig } from './endpoint-config.ts';
import { buildEndpointAuth } from './auth/endpoint-auth.ts';
import type { CustomerRegistry, CustomHandler, EndpointVersion, LoadedEndpoint } from './types.ts';
import { planVersions, VERSION_FILES, type VersionPlan } from './endpoint-versions.ts';
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
/** At the endpoint's root, whatever its versions; each version adds VERSION_FILES (endpoint-versions.ts). */
export const ENDPOINT_FILES = ['endpoint.json', 'README.md'] as const;

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

/** Names, sizes and modification times of `files` in `dir`: a cheap test of whether they changed. */
export function filesPrint(dir: string, files: readonly string[]): string {
  return files.map((f) => {
    try {
      const st = statSync(join(dir, f));
      return `${f}:${st.size}:${st.mtimeMs}`;
    } catch {
      return `${f}:-`;
    }
  }).join('|');
}

/** Loads and checks one version's schema, example and handler (`fresh`: import handler.ts anew). */
async function loadVersion(plan: VersionPlan, fresh: string | undefined): Promise<EndpointVersion> {
  const folder = plan.dir;
  const fingerprint = filesPrint(folder, VERSION_FILES);
  const missing = VERSION_FILES.filter((f) => !existsSync(join(folder, f)));
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
  const example = readJson(folder, 'example.json');
  const exampleProblems = validateBody(example);
  if (exampleProblems.length > 0) {
    throw new CustomerLoadError(folder, `example.json does not pass schema.json: ${exampleProblems.map((p) => p.message).join('; ')}`);
  }
  let mod: { default?: unknown };
  try {
    mod = (await loadModule(join(folder, 'handler.ts'), fresh)) as { default?: unknown };
  } catch (e) {
    const hint = isEsmScope(folder) ? '' : ' (handlers are ES modules: give the customers folder a package.json with {"type": "module"})';
    throw new CustomerLoadError(folder, `handler.ts failed to load: ${(e as Error).message}${hint}`);
  }
  if (typeof mod.default !== 'function') throw new CustomerLoadError(folder, 'handler.ts must default-export a function (body, ctx) => result');
  return {
    ...plan, schema: schema as Record<string, unknown>, example, validateBody, handler: mod.default as CustomHandler<any>,
    fingerprint, ...(fresh !== undefined && { fresh }),
  };
}

/**
 * Loads and checks one endpoint folder and every version in it (`customers new` checks what
 * it wrote with this). `previous`: the endpoint as loaded before; its versions whose files
 * are unchanged are kept as they are (their handlers are not imported again).
 */
export async function loadEndpoint(
  folder: string, customer: string, name: string, env: NodeJS.ProcessEnv = process.env,
  /** A new value makes handler.ts load afresh (module caches are per URL): a folder retried after an edit. */
  fresh?: string,
  previous?: LoadedEndpoint,
): Promise<LoadedEndpoint> {
  if (!ENDPOINT_NAME_RE.test(name)) throw new CustomerLoadError(folder, 'the folder name must be lowercase letters, digits and dashes');
  const missing = ENDPOINT_FILES.filter((f) => !existsSync(join(folder, f)));
  if (missing.length > 0) throw new CustomerLoadError(folder, `missing ${missing.join(', ')}`);

  const config = readJson(folder, 'endpoint.json');
  const problems = checkEndpointConfig(config);
  if (problems.length > 0) throw new CustomerLoadError(folder, `endpoint.json: ${problems.join('; ')}`);
  const cfg = config as EndpointConfig;
  const plan = planVersions(folder, cfg);
  if (typeof plan === 'string') throw new CustomerLoadError(folder, plan);

  const versions = new Map<number, EndpointVersion>();
  for (const p of plan.versions) {
    const before = previous?.versions.get(p.version);
    const same = before !== undefined && before.dir === p.dir && before.fingerprint === filesPrint(p.dir, VERSION_FILES);
    versions.set(p.version, same ? { ...before, ...p } : await loadVersion(p, fresh));
  }

  let auth;
  try {
    auth = await buildEndpointAuth(cfg.auth ?? [], env);
  } catch (e) {
    throw new CustomerLoadError(folder, `endpoint.json: ${(e as Error).message}`);
  }
  const current = versions.get(plan.current)!;
  return {
    customer,
    name,
    folder,
    config: cfg,
    schema: current.schema,
    example: current.example,
    validateBody: current.validateBody,
    handler: current.handler,
    current: plan.current,
    versions,
    auth,
    warnings: [...inlineSecretWarnings(customer, cfg.auth ?? []), ...sunsetWarnings(plan.versions)],
  };
}

/** Deprecated versions past their sunset are still served until their folder is removed: say so at load. */
function sunsetWarnings(versions: readonly VersionPlan[], now = Date.now()): string[] {
  return versions.filter((v) => v.sunsetAt !== null && v.sunsetAt <= now).map((v) =>
    `version ${v.version} is past its sunset (${new Date(v.sunsetAt!).toISOString().slice(0, 10)}) and still served: retire it (remove its folder and its endpoint.json entry) once its callers have moved`);
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
