// Loads every custom endpoint of the customer folders (the shipped customers/, then those
// CUSTOMERS_DIR lists; each holds <slug>/endpoints/<name>/) and checks it: endpoint.json is valid, and for each version the schema compiles, example.json
// passes it and handler.ts default-exports a function; the auth can be built. A new endpoint
// is one new folder, with nothing to register. A broken folder is named: by an error (the
// CLI), or, for the server, reported and skipped so that every other endpoint serves.
// handler.ts is loaded in a handler worker thread (handler-worker.ts), never on this one: its
// top-level code is the customer's and runs with the handlers' limits and environment.
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { compileBodySchema, type BodyValidator } from './body-validator.ts';
import { checkEndpointConfig, type EndpointConfig } from './endpoint-config.ts';
import { buildEndpointAuth } from './auth/endpoint-auth.ts';
import type { CustomerRegistry, EndpointVersion, LoadedEndpoint } from './types.ts';
import { planVersions, VERSION_FILES, type VersionPlan } from './endpoint-versions.ts';
import { createHandlerPool, HandlerStopped, type HandlerPool } from './handler-pool.ts';
import type { Logger } from '../logger.ts';

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
  /** The threads handler.ts files are loaded in; by default a pool of one thread, closed after loading. */
  handlers?: HandlerPool;
  /**
   * Given: a broken folder is passed here and skipped, and loading goes on (the server: one
   * customer's mistake must not keep every other endpoint from serving). Absent: the first
   * broken folder throws (the CLI's check).
   */
  onBroken?: (err: CustomerLoadError) => void;
}

export interface LoadEndpointOptions {
  env?: NodeJS.ProcessEnv;
  /** A new value makes handler.ts load afresh (module caches are per URL): a folder retried after an edit. */
  fresh?: string;
  /** The endpoint as loaded before; its versions whose files are unchanged are kept as they are (not loaded again). */
  previous?: LoadedEndpoint;
  handlers?: HandlerPool;
}

/** How long loading one handler.ts (its top-level code) may take. */
export const HANDLER_LOAD_TIMEOUT_MS = 10_000;

/** Runs `fn` with `handlers`, or with a pool of one thread started for it and closed after. */
async function withHandlers<T>(handlers: HandlerPool | undefined, fn: (pool: HandlerPool) => Promise<T>): Promise<T> {
  if (handlers) return fn(handlers);
  const pool = createHandlerPool({ threads: 1 });
  try {
    return await fn(pool);
  } finally {
    await pool.close();
  }
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

/** Loads handler.ts in a handler thread and checks its default export; null when it is a function, else why not. */
async function checkHandler(handlers: HandlerPool, folder: string, fresh: string | undefined): Promise<string | null> {
  let out;
  try {
    out = await handlers.run({ file: join(folder, 'handler.ts'), fresh, body: null, ctx: {}, check: true }, HANDLER_LOAD_TIMEOUT_MS);
  } catch (e) {
    if (e instanceof HandlerStopped) return `handler.ts failed to load: its top-level code ${e.message}`;
    throw e;
  }
  if (out.ok) return null;
  if ('error' in out && out.loadFailed) {
    const hint = isEsmScope(folder) ? '' : ' (handlers are ES modules: give the customers folder a package.json with {"type": "module"})';
    return `handler.ts failed to load: ${out.error}${hint}`;
  }
  return 'error' in out ? out.error : 'handler.ts failed to load';
}

/** Loads and checks one version's schema, example and handler (`fresh`: load handler.ts anew). */
async function loadVersion(plan: VersionPlan, fresh: string | undefined, handlers: HandlerPool): Promise<EndpointVersion> {
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
  const handlerProblem = await checkHandler(handlers, folder, fresh);
  if (handlerProblem !== null) throw new CustomerLoadError(folder, handlerProblem);
  return { ...plan, schema: schema as Record<string, unknown>, example, validateBody, fingerprint, ...(fresh !== undefined && { fresh }) };
}

/** Loads and checks one endpoint folder and every version in it (`customers new` checks what it wrote with this). */
export async function loadEndpoint(folder: string, customer: string, name: string, opts: LoadEndpointOptions = {}): Promise<LoadedEndpoint> {
  return withHandlers(opts.handlers, (handlers) => loadOneEndpoint(folder, customer, name, { ...opts, handlers }));
}

async function loadOneEndpoint(
  folder: string, customer: string, name: string, { env = process.env, fresh, previous, handlers }: LoadEndpointOptions & { handlers: HandlerPool },
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
    versions.set(p.version, same ? { ...before, ...p } : await loadVersion(p, fresh, handlers));
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

/** CUSTOMERS_DIR as the loaders take it: one folder, or several in load order (Config.customersDirs). */
export type CustomerFolders = string | readonly string[];

/**
 * Each customer folder in `dirs` (a missing one holds none), by slug, in load order, and the
 * folders whose slug an earlier folder already has (linked in twice: left out silently).
 */
export function customerFoldersIn(dirs: CustomerFolders): { folders: Map<string, string>; duplicates: CustomerLoadError[] } {
  const folders = new Map<string, string>();
  const duplicates: CustomerLoadError[] = [];
  for (const dir of typeof dirs === 'string' ? [dirs] : dirs) {
    if (!existsSync(dir)) continue;
    for (const customer of subfolders(dir)) {
      const folder = join(dir, customer);
      const first = folders.get(customer);
      if (first === undefined) folders.set(customer, folder);
      else if (realpathSync(first) !== realpathSync(folder)) {
        duplicates.push(new CustomerLoadError(folder, `the customer "${customer}" is also ${first}: a customer is one folder, which holds all its endpoints`));
      }
    }
  }
  return { folders, duplicates };
}

/** The folder of customer `customer` among `dirs` (the first holding it), or undefined. */
export function customerFolder(dirs: CustomerFolders, customer: string): string | undefined {
  for (const dir of typeof dirs === 'string' ? [dirs] : dirs) {
    const folder = join(dir, customer);
    if (existsSync(folder) && statSync(folder).isDirectory()) return folder;
  }
  return undefined;
}

/**
 * Loads `dirs` (missing: nothing to load). A broken folder (an endpoint's, a customer's
 * without endpoints/, or a customer found again in a later folder) goes to opts.onBroken and
 * is left out; without onBroken, the first one throws its CustomerLoadError.
 */
export async function loadCustomers(dirs: CustomerFolders, opts: LoadCustomersOptions = {}): Promise<CustomerRegistry> {
  const env = opts.env ?? process.env;
  const registry = new Map<string, Map<string, LoadedEndpoint>>();
  const broken = (err: unknown): void => {
    if (!(err instanceof CustomerLoadError) || !opts.onBroken) throw err;
    opts.onBroken(err);
  };
  const { folders, duplicates } = customerFoldersIn(dirs);
  if (folders.size === 0) return registry;
  await withHandlers(opts.handlers, async (handlers) => {
    for (const [customer, customerDir] of folders) {
      if (!CUSTOMER_SLUG_RE.test(customer)) {
        broken(new CustomerLoadError(customerDir, 'the customer folder name must be a slug of lowercase letters, digits and dashes'));
        continue;
      }
      const endpointsDir = join(customerDir, 'endpoints');
      if (!existsSync(endpointsDir) || !statSync(endpointsDir).isDirectory()) {
        broken(new CustomerLoadError(customerDir, 'has no endpoints/ folder'));
        continue;
      }
      const endpoints = new Map<string, LoadedEndpoint>();
      for (const name of subfolders(endpointsDir)) {
        try {
          endpoints.set(name, await loadOneEndpoint(join(endpointsDir, name), customer, name, { env, handlers }));
        } catch (err) {
          broken(err);
        }
      }
      registry.set(customer, endpoints);
    }
  });
  for (const err of duplicates) broken(err);
  return registry;
}

/**
 * The server's load at start: each endpoint's warnings logged; a broken folder logged and
 * skipped, so every other endpoint serves while it answers 404 ENDPOINT_NOT_FOUND (as a new
 * folder that does not load yet does); `skipped` goes to the watcher, which retries it once
 * its files change.
 */
export async function loadCustomersToServe(dirs: CustomerFolders, handlers: HandlerPool, logger: Logger): Promise<{ registry: CustomerRegistry; skipped: string[] }> {
  const skipped: string[] = [];
  const registry = await loadCustomers(dirs, {
    handlers,
    onBroken: (err) => {
      skipped.push(err.folder);
      logger.error({ folder: err.folder, err: err.message },
        'custom endpoint folder does not load and is skipped: its requests answer 404 ENDPOINT_NOT_FOUND, every other endpoint serves; it is retried when its files change');
    },
  });
  for (const ep of listEndpoints(registry)) {
    for (const w of ep.warnings) logger.warn({ customer: ep.customer, endpoint: ep.name }, w);
  }
  return { registry, skipped };
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
