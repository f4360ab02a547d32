// Wires the runtime from a Config: store, logger, authenticator, app (with its event writer),
// delivery, and an HTTP server with tight timeouts. Used by the process entry and by tests (port 0).
import { createServer, type Server } from 'node:http';
import { limitConnections } from './http/connection-limits.ts';
import type { AddressInfo } from 'node:net';
import type { Config } from './config.ts';
import { createLogger, type Logger } from './logger.ts';
import { openStore } from './store/open-store.ts';
import type { Store } from './store/types.ts';
import { createAuthenticator } from './accounts/authenticator.ts';
import type { EventWriter } from './store/event-writer.ts';
import { createMetrics } from './http/metrics.ts';
import { metricsExposureWarning } from './http/metrics-exposure.ts';
import { createApp, type App } from './app.ts';
import { loadPlugins, type PluginRegistry } from './destinations/load-plugins.ts';
import { createDestinationCache } from './destinations/destination-cache.ts';
import { usePluginRules } from './rules/plugin-rules.ts';
import { startRuleWatcher, type RuleWatcher } from './rules/rule-watcher.ts';
import { formatRuleError } from './rules/load-rules.ts';
import { describeHold } from './rules/rule-holds.ts';
import { createServerHashPool, serverPoolThreads, type HashPool } from './workers/pool.ts';
import { startDelivery, startWhenRulesValid, type DeliveryOverrides, type DeliveryRuntime } from './delivery/start-delivery.ts';
import { createCommitWake } from './delivery/commit-wake.ts';
import { createPreviewPool } from './pipeline/preview-pool.ts';
import { startDeliveryThread, type DeliveryThread } from './delivery/delivery-thread-host.ts';
import { registerDeliveryMetrics } from './delivery/delivery-metrics.ts';
import { loadCustomersToServe } from './customers/load-customers.ts';
import { watchNewEndpoints, type EndpointWatcher } from './customers/endpoint-watcher.ts';
import { createHandlerPool } from './customers/handler-pool.ts';
import { SERVER_BUSY_TIMEOUTS } from './store/sqlite/connection.ts';
import { openCustomRecordStore } from './store/sqlite/custom-records.ts';
import type { CustomerRegistry } from './customers/types.ts';
import { sqliteFile } from './store/open-store.ts';
import { describeModeChanges } from './store/sqlite/private-files.ts';
import { isPgStore } from './store/postgres/pg-store.ts';
import { pgCustomRecordStore } from './store/postgres/custom-records.ts';
import { pgCustomRateLimiter, pgTokenBuckets } from './store/postgres/rate-buckets.ts';
import { createDraftPool } from './admin/draft-pool.ts';
import { createPlatformChecker } from './delivery/platform-check.ts';
import { announceServiceUrl, serviceBaseUrl } from './service-url.ts';
import { TICK_MS } from './poll-tick.ts';
import { sweepOnTick } from './http/connection-sweep.ts';
import { slowHttpTickWhenIdle } from './http/idle-tick.ts';

export interface Running {
  url: string;
  server: Server;
  app: App;
  store: Store;
  /** The app's event writer (src/intake/intake-writer.ts). */
  writer: EventWriter;
  logger: Logger;
  plugins: PluginRegistry;
  rules: RuleWatcher;
  pool: HashPool;
  /** The dispatcher and the delivery jobs (src/delivery/); null while invalid rules hold delivery back, or with the delivery thread. */
  readonly delivery: DeliveryRuntime | null;
  /** With DELIVERY_THREAD=1: the thread delivery runs on. */
  readonly deliveryThread: DeliveryThread | null;
  /**
   * Settles once delivery has started (the delivery thread is up, or the in-thread dispatcher
   * is running or waiting for valid rules); rejects when it cannot start. The server listens
   * before: intake needs no delivery, and what it accepts meanwhile waits in the queue.
   */
  readonly deliveryReady: Promise<void>;
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
  /** Tests: the admin API's rule previews' and replays' time limit (default DRAFT_TIME_LIMIT_MS). */
  draftTimeLimitMs?: number;
}

export async function startServer(config: Config, opts: StartOptions = {}): Promise<Running> {
  const logger = opts.logger ?? createLogger(config.logLevel);
  // What start-up has started, stopped in reverse when a later step fails (a port in use):
  // the caller then reports the failure last, with no watcher, pool or store left running.
  const started: (() => unknown)[] = [];
  try {
    return await start(config, opts, logger, started);
  } catch (err) {
    for (const stop of started.reverse()) {
      try {
        await stop();
      } catch (stopErr) {
        logger.warn({ err: stopErr }, 'stopping after a failed start failed');
      }
    }
    throw err;
  }
}

async function start(config: Config, opts: StartOptions, logger: Logger, started: (() => unknown)[]): Promise<Running> {
  // Plugins first: a broken one stops start before the store is touched.
  const plugins = await loadPlugins(config.pluginsDirs);
  // Handler modules load in the handler threads only (their top-level code is the customer's).
  const handlers = createHandlerPool({ memoryMb: config.handlerMemoryMb });
  started.push(() => handlers.close());
  const customers = await loadCustomersToServe(config.customersDirs, handlers, logger);
  const endpointWatcher = watchNewEndpoints(config.customersDirs, customers.registry, { logger, handlers, skipped: customers.skipped });
  started.push(() => endpointWatcher.close());
  const store = opts.store ?? (await openStore(config, 'server', {
    onError: (err) => logger.warn({ err }, 'a database connection failed; the pool replaces it'),
    onModesTightened: (changes) => logger.warn({ changes }, describeModeChanges(changes)),
  }));
  if (!opts.store) started.push(() => store.close());
  // The files overlaid by the live versions in the store (src/rules/README.md); its first read before serving.
  usePluginRules(config.rulesDir, config.pluginsDirs);
  // PostgreSQL: the revision is read when a publish is announced, not every second (announced-poll.ts).
  const rules = startRuleWatcher({ dir: config.rulesDir, logger, store: store.rules, announcer: store.watchChanges?.bind(store) });
  started.push(() => rules.close());
  await rules.ready;
  const shared = isPgStore(store) ? store : null;
  const metrics = createMetrics();
  // Each intake commit that accepted events wakes the fan-out (commit-wake.ts), so they go out
  // without waiting for a poll: the event writer (createApp) calls `committed`; delivery is
  // attached as its target below, once it runs.
  const deliveryWake = createCommitWake();
  // With the delivery thread, its metrics are appended to the main registry's on each scrape.
  let deliveryMetricsText: (() => Promise<string>) | null = null;
  const authenticator = createAuthenticator(store);
  const pool = createServerHashPool(serverPoolThreads(config.workers).http, logger);
  started.push(() => pool.close());
  const customRecords = shared ? pgCustomRecordStore(shared.pool) : openCustomRecordStore(sqliteFile(config), { busyTimeoutMs: SERVER_BUSY_TIMEOUTS.mainMs });
  started.push(() => customRecords.close());
  const drafts = createDraftPool({ pluginsDir: config.pluginsDirs, timeLimitMs: opts.draftTimeLimitMs });
  // PREVIEW_THREADS > 0: endpoint 2's previews (and custom endpoints' test mode) are planned on
  // that many threads, not the HTTP thread (off by default: see "Performance" in the README).
  const previewPool = config.previewThreads === 0 ? undefined : createPreviewPool({ pluginsDir: config.pluginsDirs, threads: config.previewThreads,
    onError: (err, restMs) => logger.error({ err, retry_in_ms: restMs }, 'the preview pool failed; previews are planned on the HTTP thread meanwhile') });
  if (previewPool) started.push(() => previewPool.close());
  // Without them, an event whose rules cost more than a millisecond's steps is planned on one
  // thread of its own, started when first needed, so no tenant's rules hold the HTTP thread.
  let overflowPool: ReturnType<typeof createPreviewPool> | undefined;
  const overflow = () => (overflowPool ??= createPreviewPool({ pluginsDir: config.pluginsDirs, threads: 1,
    onError: (err, restMs) => logger.error({ err, retry_in_ms: restMs }, 'the overflow preview thread failed; costly previews are answered as stopped meanwhile') }));
  started.push(() => overflowPool?.close());
  started.push(() => drafts.close());
  // Endpoint 2's ?validate=platform: the delivery's sender, with the same address rule.
  const platformChecks = createPlatformChecker({ plugins, allowPrivate: config.allowPrivateDestinations });
  started.push(() => platformChecks.close());
  const app = createApp({
    config,
    store,
    logger,
    authenticator,
    wakeDelivery: deliveryWake.committed,
    metrics,
    preview: { plugins, rules: () => rules.current(), pool, ...(previewPool ? { offThread: previewPool } : { overflow }) },
    destinations: createDestinationCache(store.destinations),
    platformChecks,
    customers: { registry: customers.registry, records: customRecords, handlers },
    degraded: () => rulesDegraded(rules),
    rules: { watcher: rules, dir: config.rulesDir, drafts },
    extraMetrics: () => deliveryMetricsText?.() ?? Promise.resolve(''),
    // On PostgreSQL the per-account buckets are shared by every instance.
    limiter: shared ? pgTokenBuckets(shared.pool) : undefined,
    customLimiter: shared ? pgCustomRateLimiter(shared.pool) : undefined,
  });

  // connectionsCheckingInterval: the headers and request timeouts are enforced by a sweep,
  // every 30 s by default; every second closes a stalled connection within the timeout + 1 s
  // (on the polls' tick, and only while a connection is open: http/connection-sweep.ts).
  const server = createServer({
    headersTimeout: config.headersTimeoutMs, requestTimeout: Math.max(30_000, config.headersTimeoutMs), keepAliveTimeout: 5_000,
    connectionsCheckingInterval: TICK_MS,
  }, app.koa.callback());
  limitConnections(server, { perAddress: config.maxConnectionsPerAddress, total: config.maxConnections });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      // Node started its connection sweep (every connectionsCheckingInterval) in this turn.
      sweepOnTick(server, TICK_MS);
      resolve();
    });
  });
  started.push(() => new Promise<void>((r) => server.close(() => r())));
  if (config.adminTokens.length === 0) logger.info('admin API and console are off (/admin and /console answer 404): set ADMIN_TOKEN to turn them on');
  const addr = server.address() as AddressInfo;
  const exposed = metricsExposureWarning(addr.address, config.metricsToken);
  if (exposed) logger.warn({ address: addr.address }, exposed);
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address === '0.0.0.0' ? '127.0.0.1' : addr.address;
  const url = `http://${host}:${addr.port}`;
  // The CLI prints this as accounts' base_url: the port given to this process may be in no settings file it reads.
  try {
    announceServiceUrl(config.dataDir, serviceBaseUrl(config, addr.port));
  } catch (err) {
    logger.warn({ err, data_dir: config.dataDir }, 'could not write the service URL to DATA_DIR; the CLI prints base_url from its own settings');
  }

  // Delivery: fan-out and send lanes, started once the server listens; stopped in close().
  // With rules invalid since start it waits (events are accepted and queued) until a
  // reload succeeds, so nothing is skipped for want of a rule that is only broken.
  // DELIVERY_THREAD=1 (the default) runs it on a worker thread; test overrides keep it here.
  let delivery: DeliveryRuntime | null = null;
  let deliveryStarting: Promise<void> | null = null;
  let thread: DeliveryThread | null = null;
  let deliveryReady: Promise<void> = Promise.resolve();
  let tickAtSecond = (): void => undefined;
  if (config.deliveryThread && !opts.delivery) {
    thread = startDeliveryThread({ config, logger, onDied: (owner) => store.deliveries.releaseOwner(owner, Date.now()) });
    // Idle, this thread's polls tick slower too (http/idle-tick.ts).
    tickAtSecond = slowHttpTickWhenIdle(config, store, logger);
    const t = thread;
    deliveryWake.attach(() => t.wake());
    deliveryMetricsText = () => t.metrics();
    // Not awaited here: the thread loads its own modules, plugins and rules (about half a
    // second), while intake is served already; wakes and metrics requests posted meanwhile
    // wait in its message port. The entry stops the process if it never starts.
    deliveryReady = t.ready;
  } else {
    const deliveryMetrics = registerDeliveryMetrics(metrics.registry);
    const beginDelivery = () => (deliveryStarting ??= startDelivery({ config, store, plugins, rules, pool, logger, metrics: deliveryMetrics, overrides: opts.delivery })
      .then((d) => { delivery = d; deliveryWake.attach(() => d.dispatcher.wake()); }));
    await startWhenRulesValid(rules, beginDelivery, logger);
  }

  let closing: Promise<void> | null = null;
  async function close(graceMs = 8_000): Promise<void> {
    closing ??= (async () => {
      tickAtSecond();
      app.startDraining();
      await deliveryStarting;
      const deliveryStopped = delivery?.stop(Math.min(5_000, graceMs)) ?? thread?.stop(Math.min(5_000, graceMs)) ?? Promise.resolve();
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), graceMs);
      await closed;
      clearTimeout(timer);
      await app.writer.drain();
      await customRecords.drain();
      endpointWatcher.close();
      await customRecords.close();
      await handlers.close();
      await drafts.close();
      await platformChecks.close();
      await deliveryStopped;
      rules.close();
      await pool.close();
      await store.close();
    })();
    return closing;
  }

  return {
    url, server, app, store, writer: app.writer, logger, plugins, rules, pool, customers: customers.registry, endpoints: endpointWatcher, close,
    get delivery() {
      return delivery;
    },
    deliveryThread: thread,
    deliveryReady,
  };
}

/** What /readyz reports about the rules when they are not all well (intake works either way). */
function rulesDegraded(rules: RuleWatcher): string[] {
  const errors = rules.errors();
  if (!rules.valid()) {
    const delivery = rules.usable()
      ? `delivery is held for ${rules.current().held.map(describeHold).join('; ')} until the rules are fixed; everything else is delivered`
      : 'delivery waits until the rules are fixed';
    return [`rules invalid since start (${errors.length} error${errors.length === 1 ? '' : 's'}, first: ${errors[0] ? formatRuleError(errors[0]) : '?'}); events are accepted and stored, ${delivery}`];
  }
  return errors.length > 0 ? [`rules: the last reload was refused (${errors.length} error${errors.length === 1 ? '' : 's'}); the last good rules keep serving`] : [];
}
