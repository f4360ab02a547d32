// Loads one custom endpoint folder (<slug>/endpoints/<name>/) and checks it: endpoint.json is
// valid, and for each version the schema compiles, example.json passes it and handler.ts
// default-exports a function; the auth can be built. handler.ts is loaded in a handler worker
// thread (handler-worker.ts), never on this one: its top-level code is the customer's and runs
// with the handlers' limits and environment. load-customers.ts loads every folder this way.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { compileBodySchema, type BodyValidator } from './body-validator.ts';
import { checkEndpointConfig, type EndpointConfig } from './endpoint-config.ts';
import { buildEndpointAuth } from './auth/endpoint-auth.ts';
import type { EndpointVersion, LoadedEndpoint } from './types.ts';
import { planVersions, VERSION_FILES, type VersionPlan } from './endpoint-versions.ts';
import { createHandlerPool, HandlerStopped, type HandlerPool } from './handler-pool.ts';
import { isEsmScope } from '../load-module.ts';

export class CustomerLoadError extends Error {
  override name = 'CustomerLoadError';
  constructor(
    readonly folder: string,
    reason: string,
  ) {
    super(`custom endpoint ${folder}: ${reason}`);
  }
}

/** Endpoint names: one path segment of /service/custom/<name>. */
export const ENDPOINT_NAME_RE = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** At the endpoint's root, whatever its versions; each version adds VERSION_FILES (endpoint-versions.ts). */
export const ENDPOINT_FILES = ['endpoint.json', 'README.md'] as const;

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
export async function withHandlers<T>(handlers: HandlerPool | undefined, fn: (pool: HandlerPool) => Promise<T>): Promise<T> {
  if (handlers) return fn(handlers);
  const pool = createHandlerPool({ threads: 1 });
  try {
    return await fn(pool);
  } finally {
    await pool.close();
  }
}

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

/** loadEndpoint in a pool of handler threads that stays open (loadCustomers loads every endpoint in one). */
export async function loadOneEndpoint(
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
