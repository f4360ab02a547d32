// Loads every custom endpoint of the customer folders (the shipped customers/, then those
// CUSTOMERS_DIR lists; each holds <slug>/endpoints/<name>/), each checked as load-endpoint.ts
// checks one. A new endpoint is one new folder, with nothing to register. A broken folder is
// named: by an error (the CLI), or, for the server, reported and skipped so that every other
// endpoint serves.
import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { CustomerRegistry, LoadedEndpoint } from './types.ts';
import type { HandlerPool } from './handler-pool.ts';
import { CustomerLoadError, loadOneEndpoint, withHandlers } from './load-endpoint.ts';
import type { Logger } from '../logger.ts';

/** Customer slugs, as `accounts update --customer` accepts them. */
export const CUSTOMER_SLUG_RE = /^[a-z0-9][a-z0-9-]{0,62}$/;

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

export const subfolders = (dir: string): string[] =>
  readdirSync(dir).filter((f) => !f.startsWith('.') && statSync(join(dir, f)).isDirectory()).sort();

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
