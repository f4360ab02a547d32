// Custom endpoint folders load without a restart, as rule files already do: every `pollMs`
// (ENDPOINT_SCAN_MS, 5 s: a scan stats every endpoint's files, ~1 ms of CPU for the four demo
// endpoints, which an idle server should not spend every second) the customer folders (the
// shipped one and those CUSTOMERS_DIR lists) are scanned; an endpoint folder the registry does not hold yet is
// loaded and added, and one whose endpoint.json or versions changed (a version added,
// deprecated, made current or retired) is loaded again and replaces the serving one, its
// unchanged versions kept as they were. A folder that fails to load (still being written,
// or broken) is logged once per state of its files and tried again when they change; the
// endpoint keeps serving as it was meanwhile.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import type { Logger } from '../logger.ts';
import { CUSTOMER_SLUG_RE, customerFoldersIn, subfolders, type CustomerFolders } from './load-customers.ts';
import { ENDPOINT_NAME_RE, filesPrint, loadEndpoint } from './load-endpoint.ts';
import { VERSION_FILES, versionDirs } from './endpoint-versions.ts';
import type { CustomerRegistry, LoadedEndpoint } from './types.ts';
import type { HandlerPool } from './handler-pool.ts';
import { every } from '../poll-tick.ts';

/** How often the customers folder is scanned by default: "within a few seconds". */
export const ENDPOINT_SCAN_MS = 5_000;

export interface WatchOptions {
  logger: Logger;
  /** Default ENDPOINT_SCAN_MS. */
  pollMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Where handler.ts files are loaded (the server's handler pool). */
  handlers?: HandlerPool;
  /** Endpoint folders that failed to load at start (already logged): retried once their files change. */
  skipped?: Iterable<string>;
}

export interface EndpointWatcher {
  /** One scan now; resolves with how many endpoints were added or reloaded. */
  scan(): Promise<number>;
  close(): void;
}

const hash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 12);

/** A cheap fingerprint of what an endpoint loads: names, sizes and modification times of endpoint.json and each version's files. */
function fingerprint(folder: string): string {
  try {
    const dirs = versionDirs(folder);
    const versions = typeof dirs === 'string' ? [dirs] : [...dirs].map(([n, d]) => `${n}@${d}{${filesPrint(d, VERSION_FILES)}}`);
    return [filesPrint(folder, ['endpoint.json']), ...versions].join('|');
  } catch {
    return 'unreadable';
  }
}

export function watchNewEndpoints(dirs: CustomerFolders, registry: CustomerRegistry, opts: WatchOptions): EndpointWatcher {
  const live = registry as Map<string, Map<string, LoadedEndpoint>>;
  const failed = new Map<string, string>();
  for (const folder of opts.skipped ?? []) failed.set(folder, fingerprint(folder));
  /** Each serving endpoint's fingerprint when it was loaded. */
  const loaded = new Map<string, string>();
  for (const endpoints of live.values()) {
    for (const ep of endpoints.values()) loaded.set(ep.folder, fingerprint(ep.folder));
  }
  /** Customer folders found again in a later folder, already logged. */
  const duplicates = new Set<string>(opts.skipped);
  let scanning: Promise<number> | undefined;

  async function scanOnce(): Promise<number> {
    let added = 0;
    const found = customerFoldersIn(dirs);
    for (const err of found.duplicates) {
      if (duplicates.has(err.folder)) continue;
      duplicates.add(err.folder);
      opts.logger.warn({ folder: err.folder, err: err.message }, 'custom endpoint folder is not loaded: its customer is served from another folder');
    }
    for (const [customer, customerDir] of found.folders) {
      const endpointsDir = join(customerDir, 'endpoints');
      if (!CUSTOMER_SLUG_RE.test(customer) || !existsSync(endpointsDir)) continue;
      for (const name of subfolders(endpointsDir)) {
        if (!ENDPOINT_NAME_RE.test(name)) continue;
        const folder = join(endpointsDir, name);
        const previous = live.get(customer)?.get(name);
        const print = fingerprint(folder);
        if (previous && (loaded.get(folder) ?? print) === print) continue;
        if (failed.get(folder) === print) continue;
        try {
          const ep = await loadEndpoint(folder, customer, name, {
            env: opts.env, fresh: print.length.toString(36) + ':' + hash(print), previous, handlers: opts.handlers,
          });
          if (!live.has(customer)) live.set(customer, new Map());
          live.get(customer)!.set(name, ep);
          loaded.set(folder, print);
          failed.delete(folder);
          added++;
          const versions = [...ep.versions.values()].map((v) => `${v.version} ${v.state}`).join(', ');
          opts.logger.info({ customer, endpoint: name, versions }, previous ? 'custom endpoint reloaded without a restart' : 'custom endpoint loaded without a restart');
          for (const w of ep.warnings) opts.logger.warn({ customer, endpoint: name }, w);
        } catch (err) {
          failed.set(folder, print);
          const what = previous ? 'changed custom endpoint folder does not load; the endpoint serves as before, and it is retried when its files change'
            : 'new custom endpoint folder does not load yet; it is retried when its files change';
          opts.logger.warn({ customer, endpoint: name, err: (err as Error).message }, what);
        }
      }
    }
    return added;
  }

  const scan = () => (scanning ??= scanOnce().finally(() => (scanning = undefined)));
  // On the thread's poll tick (poll-tick.ts) when a whole number of seconds.
  const stop = every(opts.pollMs ?? ENDPOINT_SCAN_MS, () => {
    scan().catch((err) => opts.logger.error({ err }, 'scanning the customers folder failed'));
  });
  return { scan, close: stop };
}
