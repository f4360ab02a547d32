// The service's settings, as the test run sees them: the variables the root hook (hermetic.ts)
// keeps from every test, and an operator's settings to prove it (every one a value that stops
// or visibly changes a server or CLI that reads it). No side effects on import.
import { fileURLToPath } from 'node:url';

/**
 * Every environment variable the service and the CLI read (src/config.ts, src/env-file.ts and
 * the few read elsewhere); test/process/hermetic-run.test.ts checks the list against src/.
 */
export const SERVICE_VARIABLES = [
  'PORT', 'HOST', 'DATA_DIR', 'DATABASE_URL', 'PG_POOL_SIZE', 'RULES_DIR', 'PLUGINS_DIR', 'CUSTOMERS_DIR',
  'ADMIN_TOKEN', 'ADMIN_TOKENS', 'ADMIN_STREAMS_MAX', 'ADMIN_STREAMS_PER_ADDRESS', 'MAX_REPLAY', 'TRUST_PROXY',
  'METRICS_TOKEN', 'ALLOW_PRIVATE_DESTINATIONS', 'DELIVERY_THREAD', 'WORKERS', 'PREVIEW_THREADS', 'LOG_LEVEL',
  'MAX_BODY_BYTES', 'MAX_BATCH_EVENTS', 'MAX_BATCH_BYTES', 'INTAKE_MAX_PENDING', 'PUBLIC_BASE_URL',
  'DEDUP_WINDOW_DAYS', 'RETENTION_DAYS', 'PAUSE_AFTER_HOURS', 'RATE_LIMIT_DEFAULT', 'INTAKE_BYTES_PER_SECOND',
  'MAX_CONNECTIONS_PER_ADDRESS', 'MAX_CONNECTIONS', 'HEADERS_TIMEOUT_MS', 'AUTH_FAILURES_PER_MINUTE',
  'CUSTOM_HANDLER_TIMEOUT_MS', 'CUSTOM_HANDLER_MEMORY_MB', 'DELIVERY_MEMORY_MB', 'DELIVERY_WATCHDOG_MS',
  'ENV_FILE', 'TRACKLANE_WRITER_THREAD', 'TRACKLANE_CRON', 'TRACKLANE_DEBUG',
  'TRACKLANE_IDLE_TICK',
] as const;

/** The settings file every test process is pointed at: comments only. */
export const NO_SETTINGS_FILE = fileURLToPath(new URL('./no-settings.env', import.meta.url));

/**
 * The environment of a process a test starts: this process's without any service variable,
 * ENV_FILE at the empty settings file, then `env` (the test's own settings) over it. The root
 * hook already cleared this process's; this keeps a file run without it (`--no-config`) sealed too.
 */
export function testProcessEnv(env: Record<string, string> = {}): Record<string, string> {
  const clean: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !(SERVICE_VARIABLES as readonly string[]).includes(name)) clean[name] = value;
  }
  return { ...clean, ENV_FILE: NO_SETTINGS_FILE, ...env };
}

/**
 * What an operator's `.env` or shell might hold, for tests to show none of it gets through: the
 * issue's own cases with working values (a PostgreSQL database elsewhere, private destinations
 * allowed, an admin token, a data folder), every other variable with a value the service refuses
 * to start with.
 */
export const OPERATOR_SETTINGS: Readonly<Record<string, string>> = {
  ...Object.fromEntries(SERVICE_VARIABLES.filter((name) => name !== 'ENV_FILE').map((name) => [name, 'set-by-the-operator'])),
  DATABASE_URL: 'postgres://operator:secret@127.0.0.1:9/operator_db',
  ALLOW_PRIVATE_DESTINATIONS: '1',
  ADMIN_TOKEN: 'operator-admin-token-0123456789',
  DATA_DIR: '/dev/null/operator-data',
  TRACKLANE_DEBUG: '1',
};

/** OPERATOR_SETTINGS as the lines of a `.env` file. */
export function operatorEnvFile(): string {
  return `${Object.entries(OPERATOR_SETTINGS).map(([k, v]) => `${k}=${v}`).join('\n')}\n`;
}
