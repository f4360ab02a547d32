// Wires the runtime from a Config: store, logger, authenticator, writer, app, and an
// HTTP server with tight timeouts. Used by the process entry and by tests (port 0).
import { createServer, type Server } from 'node:http';
import { limitConnections } from './http/connection-limits.ts';
import type { AddressInfo } from 'node:net';
import type { Config } from './config.ts';
import { createLogger, type Logger } from './logger.ts';
import { openStore } from './store/open-store.ts';
import type { Store } from './store/types.ts';
import { createAuthenticator } from './accounts/authenticator.ts';
import { createEventWriter, type EventWriter } from './store/event-writer.ts';
import { createMetrics } from './http/metrics.ts';
import { createApp, type App } from './app.ts';
import { loadPlugins, type PluginRegistry } from './destinations/load-plugins.ts';
import { createDestinationCache } from './destinations/destination-cache.ts';
import { startRuleWatcher, type RuleWatcher } from './rules/rule-watcher.ts';
import { createHashPool, type HashPool } from './workers/pool.ts';
import { startDelivery, type DeliveryOverrides, type DeliveryRuntime } from './delivery/start-delivery.ts';
import { registerDeliveryMetrics } from './delivery/delivery-metrics.ts';
import { listEndpoints, loadCustomers } from './customers/load-customers.ts';
import { watchNewEndpoints, type EndpointWatcher } from './customers/endpoint-watcher.ts';
import { createHandlerPool } from './customers/handler-pool.ts';
import { openCustomRecordStore } from './customers/custom-record-store.ts';
import type { CustomerRegistry } from './customers/types.ts';
import { sqliteFile } from './store/open-store.ts';

export interface Running {
  url: string;
  server: Server;
  app: App;
  store: Store;
  writer: EventWriter;
  logger: Logger;
  plugins: PluginRegistry;
  rules: RuleWatcher;
  pool: HashPool;
  /** The dispatcher and the delivery jobs (src/delivery/). */
  delivery: DeliveryRuntime;
  /** Custom endpoints loaded from CUSTOMERS_DIR. */
  customers: CustomerRegistry;
  /** Loads custom endpoint folders added while running (tests call scan()). */
  endpoints: EndpointWatcher;
  /** Stops accepting, finishes in-flight requests and commits, closes the store. */
  close(graceMs?: number): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
  store?: Store;
  /** Delivery knobs for tests (short leases, linger, retry schedule, pause window). */
  delivery?: DeliveryOverrides;
}

export async function startServer(config: Config, opts: StartOptions = {}): Promise<Running> {
  const logger = opts.logger ?? createLogger(config.logLevel);
  // Plugins and rules first: a broken one stops start before the store is touched.
  const plugins = await loadPlugins(config.pluginsDir);
  const customers = await loadCustomers(config.customersDir);
  for (const ep of listEndpoints(customers)) {
    for (const w of ep.warnings) logger.warn({ customer: ep.customer, endpoint: ep.name }, w);
  }
  const endpointWatcher = watchNewEndpoints(config.customersDir, customers, { logger });
  const rules = startRuleWatcher({ dir: config.rulesDir, logger });
  const store = opts.store ?? (await openStore(config));
  const metrics = createMetrics();
  const writer = createEventWriter(store.events, { onBatch: (n) => metrics.commitBatch.observe(n) });
  const authenticator = createAuthenticator(store);
  const pool = createHashPool({ threads: config.workers });
  const customRecords = openCustomRecordStore(sqliteFile(config));
  const handlers = createHandlerPool({ memoryMb: config.handlerMemoryMb });
  const app = createApp({
    config,
    store,
    logger,
    authenticator,
    writer,
    metrics,
    preview: { plugins, rules: () => rules.current(), pool },
    destinations: createDestinationCache(store.destinations),
    customers: { registry: customers, records: customRecords, handlers },
  });

  // connectionsCheckingInterval: the headers and request timeouts are enforced by a sweep,
  // every 30 s by default; every second closes a stalled connection within the timeout + 1 s.
  const server = createServer({
    headersTimeout: config.headersTimeoutMs, requestTimeout: Math.max(30_000, config.headersTimeoutMs), keepAliveTimeout: 5_000,
    connectionsCheckingInterval: 1_000,
  }, app.koa.callback());
  limitConnections(server, { perAddress: config.maxConnectionsPerAddress, total: config.maxConnections });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address === '0.0.0.0' ? '127.0.0.1' : addr.address;
  const url = `http://${host}:${addr.port}`;

  // Delivery: fan-out and send lanes, started once the server listens; stopped in close().
  const delivery = await startDelivery({ config, store, plugins, rules, pool, logger, metrics: registerDeliveryMetrics(metrics.registry), overrides: opts.delivery });

  let closing: Promise<void> | null = null;
  async function close(graceMs = 8_000): Promise<void> {
    closing ??= (async () => {
      app.startDraining();
      const deliveryStopped = delivery.stop(Math.min(5_000, graceMs));
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), graceMs);
      await closed;
      clearTimeout(timer);
      await writer.drain();
      await customRecords.drain();
      endpointWatcher.close();
      await customRecords.close();
      await handlers.close();
      await deliveryStopped;
      rules.close();
      await pool.close();
      await store.close();
    })();
    return closing;
  }

  return { url, server, app, store, writer, logger, plugins, rules, pool, customers, endpoints: endpointWatcher, delivery, close };
}
