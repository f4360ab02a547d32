// Environment → typed, validated Config. A bad value stops start with a one-line
// reason naming the variable, so a typo never runs with a silent default.
import { realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { availableParallelism } from 'node:os';
import { parseTrustProxy, type TrustProxy } from './client-ip.ts';
import { projectRoot } from './build-state.cjs';

/** Body bytes per second per account on the intake when INTAKE_BYTES_PER_SECOND is unset. */
export const DEFAULT_INTAKE_BYTES_PER_SECOND = 16 * 1024 * 1024;

/** One admin credential: `ADMIN_TOKEN` is named `admin`; `ADMIN_TOKENS` names its own. */
export interface AdminToken {
  name: string;
  token: string;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | null;
  /** PostgreSQL connections per process (PG_POOL_SIZE). */
  pgPoolSize: number;
  rulesDir: string;
  /** Plugin folders in load order: the shipped plugins/, then each folder PLUGINS_DIR lists (see extensionFolders). */
  pluginsDirs: readonly string[];
  /** Custom endpoint folders in load order: the shipped customers/, then each folder CUSTOMERS_DIR lists. */
  customersDirs: readonly string[];
  /** Where `plugins new` writes: the first folder PLUGINS_DIR lists, else the shipped plugins/. */
  newPluginsDir: string;
  /** Where `customers new` writes a new customer: the first folder CUSTOMERS_DIR lists, else the shipped customers/. */
  newCustomersDir: string;
  /** Bearer tokens of the admin API and console, each with the name its changes are logged under; empty: both off. */
  adminTokens: readonly AdminToken[];
  /** Concurrent live streams of the admin API, at most (ADMIN_STREAMS_MAX). */
  adminStreamsMax: number;
  /** ... and from one client address (ADMIN_STREAMS_PER_ADDRESS). */
  adminStreamsPerAddress: number;
  /** Deliveries one bulk replay re-queues, at most (MAX_REPLAY). */
  maxReplay: number;
  /** How far X-Forwarded-For is believed (TRUST_PROXY): off, a hop count, or proxy CIDRs. */
  trustProxy: TrustProxy;
  /** When set, GET /metrics needs `Authorization: Bearer <token>`. */
  metricsToken: string | null;
  allowPrivateDestinations: boolean;
  workers: number;
  /** Threads endpoint 2's previews are planned on; 0 (default): the HTTP thread. */
  previewThreads: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  maxBodyBytes: number;
  /** Delivery runs on its own worker thread (DELIVERY_THREAD, default 1); 0 runs it on the main thread. */
  deliveryThread: boolean;
  /** Batch intake: events per request and bytes per body, at most. */
  maxBatchEvents: number;
  maxBatchBytes: number;
  /** Events waiting for the intake commit, at most; past it intake answers 503 + Retry-After at once. */
  intakeMaxPending: number;
  /** Base URL printed for new accounts; defaults to http://localhost:PORT. */
  publicBaseUrl: string;
  /** Whether PUBLIC_BASE_URL set publicBaseUrl (else it is derived from PORT). */
  publicBaseUrlSet: boolean;
  /** An (account, event name, event.id) seen within this many days is a duplicate. */
  dedupWindowDays: number;
  /** Events and delivery attempts older than this many days are purged. */
  retentionDays: number;
  /** A destination with no success for this many hours while failing is paused. */
  pauseAfterHours: number;
  /** Intake requests per second per account, unless the account sets its own. */
  rateLimitDefault: number;
  /** Intake body bytes per second per account (endpoints 1–3 and batch), per process. */
  intakeBytesPerSecond: number;
  /** Open connections allowed from one client address, and in total; more are closed at once. */
  maxConnectionsPerAddress: number;
  maxConnections: number;
  /** A request whose headers are not complete after this long is closed (checked every second). */
  headersTimeoutMs: number;
  /** Failed authentications allowed per client address per minute before 429. */
  authFailuresPerMinute: number;
  /** A custom handler call is stopped after this long (its worker thread is terminated). */
  handlerTimeoutMs: number;
  /** Heap limit of a custom handler's worker thread, MiB. */
  handlerMemoryMb: number;
  /** Old-generation heap limit of the delivery thread, MiB (DELIVERY_MEMORY_MB): past it the thread dies and is restarted, the process stays. */
  deliveryMemoryMb: number;
  /** The delivery thread is restarted when its event loop has not answered for this long (DELIVERY_WATCHDOG_MS). */
  deliveryWatchdogMs: number;
  /**
   * Tests only (TRACKLANE_IDLE_TICK): the delivery thread's slowed tick (src/poll-tick.ts
   * slowWhenIdle), so a test can watch an idle process be woken; empty (the defaults) when unset.
   */
  idleTick: IdleTick;
}

/** TRACKLANE_IDLE_TICK's fields: each unset one keeps its default (src/poll-tick.ts slowWhenIdle). */
export interface IdleTick {
  idleTickMs?: number;
  idleAfterTicks?: number;
  heardPollMs?: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function int(env: NodeJS.ProcessEnv, key: string, def: number, min: number, max: number): number {
  const raw = env[key];
  if (raw === undefined || raw === '') return def;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${key} must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${key} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function str(env: NodeJS.ProcessEnv, key: string): string | null {
  const v = env[key];
  return v === undefined || v === '' ? null : v;
}

/** The folders the package ships its destination plugins and custom endpoints in. */
export interface ShippedFolders {
  plugins: string;
  customers: string;
}

const ROOT = projectRoot(import.meta.url);
export const SHIPPED_FOLDERS: ShippedFolders = { plugins: join(ROOT, 'plugins'), customers: join(ROOT, 'customers') };

const realOrSelf = (dir: string): string => {
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
};

/**
 * PLUGINS_DIR / CUSTOMERS_DIR: `:`-separated folders (relative ones from `cwd`), loaded after
 * the shipped one, in the order listed; a folder given twice (or the shipped one listed, or a
 * link to one already there) counts once. `first`: the first one listed, else the shipped one.
 */
export function extensionFolders(raw: string | null, cwd: string, shipped: string): { dirs: string[]; first: string } {
  const listed = (raw ?? '').split(':').filter((p) => p.trim() !== '').map((p) => resolve(cwd, p.trim()));
  const dirs: string[] = [];
  const seen = new Set<string>();
  for (const dir of [shipped, ...listed]) {
    const key = realOrSelf(dir);
    if (seen.has(key)) continue;
    seen.add(key);
    dirs.push(dir);
  }
  return { dirs, first: listed[0] ?? shipped };
}

/**
 * Reads and validates the environment. Throws ConfigError with a one-line reason. `shipped`:
 * the shipped plugin and endpoint folders (the tests' servers give the repository's tracked part).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd(), shipped: ShippedFolders = SHIPPED_FOLDERS): Config {
  const port = int(env, 'PORT', 8080, 0, 65535);
  const host = str(env, 'HOST') ?? '0.0.0.0';
  const databaseUrl = str(env, 'DATABASE_URL');
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError(`DATABASE_URL must start with postgres:// or postgresql://`);
  }
  const logLevel = (str(env, 'LOG_LEVEL') ?? 'info') as Config['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const allow = str(env, 'ALLOW_PRIVATE_DESTINATIONS');
  if (allow !== null && allow !== '0' && allow !== '1') {
    throw new ConfigError(`ALLOW_PRIVATE_DESTINATIONS must be 1 or 0, got "${allow}"`);
  }
  const deliveryThread = str(env, 'DELIVERY_THREAD');
  if (deliveryThread !== null && deliveryThread !== '0' && deliveryThread !== '1') {
    throw new ConfigError(`DELIVERY_THREAD must be 1 or 0, got "${deliveryThread}"`);
  }
  const adminTokens = parseAdminTokens(str(env, 'ADMIN_TOKEN'), str(env, 'ADMIN_TOKENS'));
  let trustProxy: TrustProxy;
  try {
    trustProxy = parseTrustProxy(str(env, 'TRUST_PROXY'));
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  const metricsToken = str(env, 'METRICS_TOKEN');
  if (metricsToken !== null && metricsToken.length < 16) {
    throw new ConfigError('METRICS_TOKEN must be at least 16 characters');
  }
  const plugins = extensionFolders(str(env, 'PLUGINS_DIR'), cwd, shipped.plugins);
  const customers = extensionFolders(str(env, 'CUSTOMERS_DIR'), cwd, shipped.customers);
  const publicBaseUrl = str(env, 'PUBLIC_BASE_URL') ?? `http://localhost:${port}`;
  try {
    const u = new URL(publicBaseUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
  } catch {
    throw new ConfigError(`PUBLIC_BASE_URL must be an http(s) URL, got "${publicBaseUrl}"`);
  }
  return {
    port,
    host,
    dataDir: resolve(cwd, str(env, 'DATA_DIR') ?? './data'),
    databaseUrl,
    pgPoolSize: int(env, 'PG_POOL_SIZE', 10, 1, 1000),
    rulesDir: resolve(cwd, str(env, 'RULES_DIR') ?? './rules'),
    pluginsDirs: plugins.dirs,
    customersDirs: customers.dirs,
    newPluginsDir: plugins.first,
    newCustomersDir: customers.first,
    adminTokens,
    adminStreamsMax: int(env, 'ADMIN_STREAMS_MAX', 20, 1, 10_000),
    adminStreamsPerAddress: int(env, 'ADMIN_STREAMS_PER_ADDRESS', 5, 1, 10_000),
    maxReplay: int(env, 'MAX_REPLAY', 10_000, 1, 10_000_000),
    metricsToken,
    trustProxy,
    allowPrivateDestinations: allow === '1',
    deliveryThread: deliveryThread !== '0',
    workers: int(env, 'WORKERS', availableParallelism(), 1, 256),
    previewThreads: int(env, 'PREVIEW_THREADS', 0, 0, 64),
    logLevel,
    maxBodyBytes: int(env, 'MAX_BODY_BYTES', 524288, 1024, 64 * 1024 * 1024),
    maxBatchEvents: int(env, 'MAX_BATCH_EVENTS', 1000, 1, 100_000),
    maxBatchBytes: int(env, 'MAX_BATCH_BYTES', 4 * 1024 * 1024, 1024, 256 * 1024 * 1024),
    intakeMaxPending: int(env, 'INTAKE_MAX_PENDING', 20_000, 1, 10_000_000),
    publicBaseUrl: publicBaseUrl.replace(/\/+$/, ''),
    publicBaseUrlSet: str(env, 'PUBLIC_BASE_URL') !== null,
    dedupWindowDays: int(env, 'DEDUP_WINDOW_DAYS', 7, 0, 365),
    retentionDays: int(env, 'RETENTION_DAYS', 30, 1, 3650),
    pauseAfterHours: int(env, 'PAUSE_AFTER_HOURS', 24, 1, 24 * 365),
    rateLimitDefault: int(env, 'RATE_LIMIT_DEFAULT', 1000, 1, 1_000_000),
    intakeBytesPerSecond: int(env, 'INTAKE_BYTES_PER_SECOND', DEFAULT_INTAKE_BYTES_PER_SECOND, 1024, 1024 * 1024 * 1024),
    maxConnectionsPerAddress: int(env, 'MAX_CONNECTIONS_PER_ADDRESS', 256, 1, 1_000_000),
    authFailuresPerMinute: int(env, 'AUTH_FAILURES_PER_MINUTE', 60, 1, 1_000_000),
    handlerTimeoutMs: int(env, 'CUSTOM_HANDLER_TIMEOUT_MS', 5_000, 50, 60_000),
    handlerMemoryMb: int(env, 'CUSTOM_HANDLER_MEMORY_MB', 128, 16, 4096),
    deliveryMemoryMb: int(env, 'DELIVERY_MEMORY_MB', 1024, 64, 65_536),
    deliveryWatchdogMs: int(env, 'DELIVERY_WATCHDOG_MS', 30_000, 1_000, 600_000),
    maxConnections: int(env, 'MAX_CONNECTIONS', 10_000, 1, 10_000_000),
    headersTimeoutMs: int(env, 'HEADERS_TIMEOUT_MS', 10_000, 1_000, 120_000),
    idleTick: idleTickOf(str(env, 'TRACKLANE_IDLE_TICK')),
  };
}

const IDLE_TICK_EXAMPLE = '{"idleTickMs":60000,"idleAfterTicks":2}';

/** TRACKLANE_IDLE_TICK: a JSON object of IdleTick's fields, each a positive whole number (idleTickMs a multiple of 1000). */
function idleTickOf(raw: string | null): IdleTick {
  if (raw === null) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`TRACKLANE_IDLE_TICK must be a JSON object (${IDLE_TICK_EXAMPLE}), got ${raw}`);
  }
  const out: IdleTick = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (key !== 'idleTickMs' && key !== 'idleAfterTicks' && key !== 'heardPollMs') {
      throw new ConfigError(`TRACKLANE_IDLE_TICK: unknown field "${key}" (idleTickMs, idleAfterTicks, heardPollMs)`);
    }
    if (!Number.isSafeInteger(value) || (value as number) < 1 || (key === 'idleTickMs' && (value as number) % 1000 !== 0)) {
      throw new ConfigError(`TRACKLANE_IDLE_TICK: ${key} must be a positive whole number${key === 'idleTickMs' ? ' of seconds in ms' : ''}, got ${JSON.stringify(value)}`);
    }
    out[key] = value as number;
  }
  return out;
}

const ADMIN_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

/**
 * ADMIN_TOKEN (named `admin`) and ADMIN_TOKENS (`name:token,name:token`) as one list. Each token
 * has 16+ characters; a name or a token given twice is refused, so every change has one author.
 */
export function parseAdminTokens(single: string | null, named: string | null): AdminToken[] {
  const tokens: AdminToken[] = [];
  if (single !== null) {
    if (single.length < 16) throw new ConfigError('ADMIN_TOKEN must be at least 16 characters');
    tokens.push({ name: 'admin', token: single });
  }
  for (const pair of (named ?? '').split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const colon = pair.indexOf(':');
    const name = colon < 0 ? '' : pair.slice(0, colon).trim();
    const token = colon < 0 ? '' : pair.slice(colon + 1).trim();
    if (!ADMIN_NAME.test(name)) throw new ConfigError('ADMIN_TOKENS must be name:token pairs separated by commas, each name 1-64 letters, digits or ._@-');
    if (token.length < 16) throw new ConfigError(`ADMIN_TOKENS: the token of "${name}" must be at least 16 characters`);
    if (tokens.some((t) => t.name === name)) throw new ConfigError(`ADMIN_TOKENS: the name "${name}" is given twice${name === 'admin' ? ' (ADMIN_TOKEN is named admin)' : ''}`);
    if (tokens.some((t) => t.token === token)) throw new ConfigError(`ADMIN_TOKENS: the token of "${name}" is also another name's token`);
    tokens.push({ name, token });
  }
  return tokens;
}
