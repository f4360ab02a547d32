// Operations endpoints: liveness, readiness, Prometheus metrics, the OpenAPI document.
import Router from '@koa/router';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Store } from '../store/types.ts';
import { StoreBusyError } from '../store/store-busy.ts';
import type { Metrics } from './metrics.ts';
import type { AppContext, AppState } from './types.ts';

export interface OpsDeps {
  store: Store;
  metrics: Metrics;
  openapi: () => unknown;
  /** When set, /metrics answers 401 without `Authorization: Bearer <metricsToken>`. */
  metricsToken?: string | null;
  /** Problems that leave the service ready but not whole: /readyz answers 200 and lists them. */
  degraded?: () => string[];
  /** Extra readiness checks (plugins and rules loaded, not draining…); each returns a reason or null. */
  readiness?: () => string | null;
  /** Prometheus text appended to the registry's (metric families registered elsewhere, e.g. the delivery thread). */
  extraMetrics?: () => Promise<string>;
}

export function opsRouter(deps: OpsDeps): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/healthz', function healthz(ctx: AppContext) {
    ctx.state.route = 'healthz';
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async function readyz(ctx: AppContext) {
    ctx.state.route = 'readyz';
    let reason = deps.readiness?.() ?? null;
    if (reason === null) {
      try {
        await deps.store.ping();
      } catch (err) {
        reason = err instanceof StoreBusyError ? err.message : 'store unreachable';
      }
    }
    ctx.status = reason === null ? 200 : 503;
    const degraded = deps.degraded?.() ?? [];
    ctx.body = reason !== null ? { status: 'not ready', reason } : degraded.length > 0 ? { status: 'ready', degraded } : { status: 'ready' };
  });
  const expected = deps.metricsToken ? digest(deps.metricsToken) : null;
  router.get('/metrics', async function metrics(ctx: AppContext) {
    ctx.state.route = 'metrics';
    if (expected !== null) {
      const header = ctx.get('authorization');
      const given = /^Bearer\s+(.+)$/i.exec(header)?.[1]?.trim() ?? '';
      if (!timingSafeEqual(digest(given), expected)) {
        ctx.status = 401;
        ctx.set('WWW-Authenticate', 'Bearer realm="metrics"');
        ctx.body = given === ''
          ? { status: 'error', code: 'AUTH_MISSING', message: 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>' }
          : { status: 'error', code: 'INVALID_CREDENTIALS', message: 'the bearer token does not match METRICS_TOKEN' };
        return;
      }
    }
    ctx.type = deps.metrics.registry.contentType;
    const [own, extra] = await Promise.all([deps.metrics.registry.metrics(), deps.extraMetrics?.() ?? '']);
    ctx.body = extra === '' ? own : `${own.endsWith('\n') ? own : `${own}\n`}${extra}`;
  });
  let doc: unknown;
  router.get('/openapi.json', function openapi(ctx: AppContext) {
    ctx.state.route = 'openapi';
    doc ??= deps.openapi();
    ctx.body = doc;
  });
  return router;
}

/** Fixed-length digests, so the comparison takes the same time whatever the lengths. */
function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}
