// New custom endpoint folders load without a restart, as rule files already do: every
// `pollMs` the customers folder is scanned, and an endpoint folder the registry does not
// hold yet is loaded (schema, endpoint.json, handler.ts) and added. A folder that fails
// to load (still being written, or broken) is logged once per version of its files and
// tried again when they change; it never disturbs the endpoints already serving.
// Endpoints already loaded keep their loaded version until a restart.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import type { Logger } from '../logger.ts';
import { CUSTOMER_SLUG_RE, ENDPOINT_NAME_RE, loadEndpoint, subfolders } from './load-customers.ts';
import type { CustomerRegistry, LoadedEndpoint } from './types.ts';

export interface EndpointWatcher {
  /** One scan now; resolves with how many endpoints were added. */
  scan(): Promise<number>;
  close(): void;
}

const hash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 12);

/** A cheap fingerprint of a folder's files: names, sizes and modification times. */
function fingerprint(folder: string): string {
  try {
    return readdirSync(folder).sort().map((f) => {
      const st = statSync(join(folder, f));
      return `${f}:${st.size}:${st.mtimeMs}`;
    }).join('|');
  } catch {
    return 'unreadable';
  }
}

export function watchNewEndpoints(dir: string, registry: CustomerRegistry, opts: { logger: Logger; pollMs?: number; env?: NodeJS.ProcessEnv }): EndpointWatcher {
  const live = registry as Map<string, Map<string, LoadedEndpoint>>;
  const failed = new Map<string, string>();
  let scanning: Promise<number> | undefined;

  async function scanOnce(): Promise<number> {
    if (!existsSync(dir)) return 0;
    let added = 0;
    for (const customer of subfolders(dir)) {
      const endpointsDir = join(dir, customer, 'endpoints');
      if (!CUSTOMER_SLUG_RE.test(customer) || !existsSync(endpointsDir)) continue;
      for (const name of subfolders(endpointsDir)) {
        if (!ENDPOINT_NAME_RE.test(name) || live.get(customer)?.has(name)) continue;
        const folder = join(endpointsDir, name);
        const print = fingerprint(folder);
        if (failed.get(folder) === print) continue;
        try {
          const ep = await loadEndpoint(folder, customer, name, opts.env ?? process.env, print.length.toString(36) + ':' + hash(print));
          if (!live.has(customer)) live.set(customer, new Map());
          live.get(customer)!.set(name, ep);
          failed.delete(folder);
          added++;
          opts.logger.info({ customer, endpoint: name }, 'custom endpoint loaded without a restart');
          for (const w of ep.warnings) opts.logger.warn({ customer, endpoint: name }, w);
        } catch (err) {
          failed.set(folder, print);
          opts.logger.warn({ customer, endpoint: name, err: (err as Error).message }, 'new custom endpoint folder does not load yet; it is retried when its files change');
        }
      }
    }
    return added;
  }

  const scan = () => (scanning ??= scanOnce().finally(() => (scanning = undefined)));
  const timer = setInterval(() => {
    scan().catch((err) => opts.logger.error({ err }, 'scanning the customers folder failed'));
  }, opts.pollMs ?? 1_000);
  timer.unref();
  return { scan, close: () => clearInterval(timer) };
}
