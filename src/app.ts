// createApp(deps) builds the Koa application and never listens: tests drive it
// through app.callback() or their own server on port 0.
import Koa from 'koa';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import type { Store } from './store/types.ts';
import type { Authenticator } from './accounts/authenticator.ts';
import type { EventWriter } from './store/event-writer.ts';
import type { Metrics } from './http/metrics.ts';
import { requestContext } from './http/request-context.ts';
import { errorFunnel } from './http/error-funnel.ts';
import { intakeRouter, standardGate } from './http/intake-routes.ts';
import { batchRouter } from './http/batch-route.ts';
import { createAuthFailureLimiter } from './http/auth-failure-limit.ts';
import { opsRouter } from './http/ops-routes.ts';
import { registerStoreMetrics } from './http/store-metrics.ts';
import { buildOpenApi } from './http/openapi.ts';
import { AppError } from './errors.ts';
import { createBodyByteBudget } from './http/body-byte-budget.ts';
import { createTokenBuckets, type TokenBucketLimiter } from './http/rate-limit.ts';
import type { AppContext, AppState } from './http/types.ts';
import type { PreviewDeps } from './pipeline/preview-event.ts';
import { createRemap } from './delivery/remap.ts';
import type { DestinationCache } from './destinations/destination-cache.ts';
import { nativeSchemasOf } from './destinations/load-plugins.ts';
import { customRouter } from './customers/custom-routes.ts';
import type { CustomerRegistry } from './customers/types.ts';
import type { CustomRecordStore } from './store/custom-record-contract.ts';
import type { HandlerPool } from './customers/handler-pool.ts';
import type { RateLimiter } from './customers/rate-limiter.ts';
import { createIntakeFeed, type IntakeFeed } from './intake/intake-feed.ts';
import { createIntakeWriter } from './intake/intake-writer.ts';
import { gatedRoutes, markAdminArea, requireAdmin } from './admin/admin-auth.ts';
import { adminRouter } from './admin/admin-routes.ts';
import { createEventStreams, type EventStreams } from './admin/event-stream.ts';
import { consoleRouter } from './console/console-route.ts';
import { withAdminPaths } from './admin/admin-openapi.ts';
import { rulesAdminRouter, type RulesAdminDeps } from './admin/rules-routes.ts';
import { manageRouter } from './admin/manage-routes.ts';
import { createPlatformChecker, type PlatformChecker } from './delivery/platform-check.ts';

export interface AppDeps {
  config: Pick<Config, 'maxBodyBytes' | 'rateLimitDefault'> & Partial<Pick<Config, 'metricsToken' | 'trustProxy' | 'authFailuresPerMinute' | 'intakeBytesPerSecond' | 'handlerTimeoutMs' | 'maxBatchEvents' | 'maxBatchBytes' | 'adminTokens' | 'adminStreamsMax' | 'adminStreamsPerAddress' | 'maxReplay' | 'allowPrivateDestinations' | 'intakeMaxPending'>>;
  store: Store;
  logger: Logger;
  authenticator: Authenticator;
  /**
   * Delivery's wake after each intake commit that stored an accepted event (the event writer
   * calls it: src/intake/intake-writer.ts); the server passes src/delivery/commit-wake.ts
   * `committed`. Absent (tests without delivery): nothing is woken.
   */
  wakeDelivery?: () => void;
  metrics: Metrics;
  preview: PreviewDeps;
  destinations: DestinationCache;
  /** Problems that leave the service ready but not whole (reported by /readyz). */
  degraded?: () => string[];
  /** Custom endpoints (endpoint 4): loaded folders and the custom-record store; not mounted when absent. */
  customers?: { registry: CustomerRegistry; records: CustomRecordStore; handlers?: HandlerPool };
  /** Per-account intake buckets; default in memory (a shared store passes its own). */
  limiter?: TokenBucketLimiter;
  /** Custom endpoints' buckets; default in memory (a shared store passes its own). */
  customLimiter?: RateLimiter;
  /** More Prometheus text for /metrics (the delivery thread's). */
  extraMetrics?: () => Promise<string>;
  /** Endpoint 2's `?validate=platform` sender (the server closes it); default one of its own, made from the config. */
  platformChecks?: PlatformChecker;
  /** The rule watcher and RULES_DIR: the admin API's rules views and edits (with ADMIN_TOKEN set). */
  rules?: { watcher: RulesAdminDeps['watcher']; dir: string; drafts: RulesAdminDeps['drafts'] };
}

export interface App {
  koa: Koa<AppState>;
  /** From now on every request but health checks is answered 503 (graceful shutdown); live streams end. */
  startDraining(): void;
  /** Every event stored through this app, after its commit (the admin API's live stream reads it). */
  feed: IntakeFeed;
  /** The event writer every intake route stores through (src/intake/intake-writer.ts); the server drains it when closing. */
  writer: EventWriter;
  /** The admin API's live streams (how many are open). */
  streams: Pick<EventStreams, 'count'>;
}

export function createApp(deps: AppDeps): App {
  const koa = new Koa<AppState>();
  let draining = false;
  // Errors are answered by the funnel; this keeps Koa from printing them again.
  koa.silent = true;

  // Every request passes these in turn (request id and log line, error answers, the drain
  // check; markAdminArea below touches admin paths only), then the routers in koa.use order.
  koa.use(requestContext({ logger: deps.logger, metrics: deps.metrics, trustProxy: deps.config.trustProxy }));
  koa.use(errorFunnel());
  koa.use(async function refuseWhileDraining(ctx: AppContext, next) {
    if (draining && ctx.path !== '/healthz') {
      ctx.set('Connection', 'close');
      throw new AppError('UNAVAILABLE', 503, 'The service is shutting down; retry shortly', { retryAfter: 2 });
    }
    await next();
  });
  registerStoreMetrics(deps.metrics.registry, deps.store);
  const ops = opsRouter({
    store: deps.store,
    metrics: deps.metrics,
    openapi: () => withAdminPaths(buildOpenApi() as Record<string, unknown>),
    metricsToken: deps.config.metricsToken,
    readiness: () => (draining ? 'shutting down' : null),
    degraded: deps.degraded,
    extraMetrics: deps.extraMetrics,
  });
  const adminTokens = deps.config.adminTokens ?? [];
  const adminOn = adminTokens.length > 0;
  koa.use(markAdminArea(adminOn));
  // The event writer, the one way intake stores events: commit, wake delivery, publish on the
  // live feed (src/intake/intake-writer.ts; the feed is free while nobody listens).
  const feed = createIntakeFeed();
  const writer = createIntakeWriter(deps.store, {
    feed, wakeDelivery: deps.wakeDelivery, onBatch: (n) => deps.metrics.commitBatch.observe(n), maxPending: deps.config.intakeMaxPending,
  });
  const streams = createEventStreams(feed, { max: deps.config.adminStreamsMax ?? 20, perAddress: deps.config.adminStreamsPerAddress ?? 5 });
  // What the standard and the custom intake share.
  const shared = {
    authenticator: deps.authenticator,
    writer,
    metrics: deps.metrics,
    maxBodyBytes: deps.config.maxBodyBytes,
    events: deps.store.events,
    preview: deps.preview,
    destinations: deps.destinations,
    authFailures: createAuthFailureLimiter({ perMinute: deps.config.authFailuresPerMinute }),
  };
  // One bucket per account shared by endpoints 1–3 and batch intake (which takes one token per event),
  // and one of body bytes per account, also shared.
  const limiter = deps.limiter ?? createTokenBuckets();
  const bodyBytes = createBodyByteBudget({ perSecond: deps.config.intakeBytesPerSecond });
  const intake = intakeRouter({
    ...shared,
    limiter,
    bodyBytes,
    rateLimitDefault: deps.config.rateLimitDefault,
    platformChecks: deps.platformChecks ?? createPlatformChecker({ plugins: deps.preview.plugins, allowPrivate: deps.config.allowPrivateDestinations ?? false }),
  });
  const batch = batchRouter({
    ...shared,
    gate: standardGate,
    limiter,
    bodyBytes,
    rateLimitDefault: deps.config.rateLimitDefault,
    maxBatchEvents: deps.config.maxBatchEvents ?? 1000,
    maxBatchBytes: deps.config.maxBatchBytes ?? 4 * 1024 * 1024,
  });
  koa.use(ops.routes());
  koa.use(consoleRouter({ enabled: adminOn }).routes());
  koa.use(intake.routes());
  koa.use(batch.routes());
  if (deps.customers) {
    const custom = customRouter({
      ...shared,
      customers: deps.customers.registry,
      records: deps.customers.records,
      handlerPool: deps.customers.handlers,
      handlerTimeoutMs: deps.config.handlerTimeoutMs,
      limiter: deps.customLimiter,
      productionRate: (a) => ({ perMinute: (a.rateLimit ?? deps.config.rateLimitDefault) * 60, burst: (a.rateLimit ?? deps.config.rateLimitDefault) * 2 }),
    });
    koa.use(custom.routes());
  }
  if (adminOn) {
    // One gate, run for every request an admin router matches (see admin-auth.ts).
    const gate = requireAdmin(adminTokens);
    const admin = adminRouter({
      store: deps.store,
      plugins: deps.preview.plugins,
      streams,
      customers: deps.customers && {
        registry: deps.customers.registry,
        process: { ...shared, records: deps.customers.records, handlerPool: deps.customers.handlers, handlerTimeoutMs: deps.config.handlerTimeoutMs },
      },
      rulesState: () => (deps.rules ? { valid: deps.rules.watcher.valid(), errors: deps.rules.watcher.errors() } : { valid: true, errors: [] }),
      remap: createRemap({ store: deps.store, plugins: deps.preview.plugins, rules: { current: deps.preview.rules }, pool: deps.preview.pool, clock: Date.now }),
    });
    koa.use(gatedRoutes(admin, gate));
    koa.use(gatedRoutes(manageRouter({ store: deps.store, plugins: deps.preview.plugins, allowPrivateDestinations: deps.config.allowPrivateDestinations ?? false, maxReplay: deps.config.maxReplay ?? 10_000, authenticator: deps.authenticator }), gate));
    if (deps.rules) {
      const rules = rulesAdminRouter({
        store: deps.store, watcher: deps.rules.watcher, dir: deps.rules.dir, drafts: deps.rules.drafts, metrics: deps.metrics,
        nativeSchemaOf: nativeSchemasOf(deps.preview.plugins),
      });
      koa.use(gatedRoutes(rules, gate));
    }
  }
  return {
    koa,
    feed,
    writer,
    streams,
    startDraining() {
      draining = true;
      streams.closeAll();
    },
  };
}
