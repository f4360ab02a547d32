// First middleware: request id, per-request logger, metrics and the access log line.
import { randomUUID } from 'node:crypto';
import type { Next } from 'koa';
import type { Logger } from '../logger.ts';
import type { Metrics } from './metrics.ts';
import { clientIp, type TrustProxy } from '../client-ip.ts';
import type { AppContext, ResponseFamily } from './types.ts';

const INCOMING_ID = /^[A-Za-z0-9._-]{8,128}$/;
/** Probes a supervisor or load balancer calls every few seconds: their lines would bury the rest at info. */
const PROBE_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);
/** Requests that do not count as serving for the event-loop delay sampling (loop-delay.ts): probes and scrapes. */
const QUIET_PATHS: ReadonlySet<string> = new Set([...PROBE_PATHS, '/metrics']);

/** The body shape a path's errors take, known before any route runs. */
export function familyOf(path: string): ResponseFamily {
  if (path.startsWith('/webhooks/service/')) return 'ack';
  if (path.startsWith('/service/standard/')) return 'standard';
  if (path.startsWith('/service/custom/')) return 'custom';
  return 'plain';
}

export function requestContext(opts: { logger: Logger; metrics: Metrics; trustProxy?: TrustProxy }) {
  const trust: TrustProxy = opts.trustProxy ?? { kind: 'off' };
  return async function requestContextMiddleware(ctx: AppContext, next: Next): Promise<void> {
    const start = process.hrtime.bigint();
    if (!QUIET_PATHS.has(ctx.path)) opts.metrics.loopDelay?.busy();
    const incoming = ctx.get('x-request-id');
    const requestId = INCOMING_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    // The one client address for allow-lists, limits and logs (ctx.ip reads it from here on).
    ctx.request.ip = clientIp(ctx.req.socket.remoteAddress, ctx.get('x-forwarded-for') || undefined, trust);
    ctx.state.family = familyOf(ctx.path);
    ctx.state.route = 'other';
    ctx.state.log = opts.logger.child({ reqId: requestId });
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      const route = ctx.state.route;
      opts.metrics.requests.inc({ route, status: String(ctx.status) });
      opts.metrics.duration.observe({ route }, seconds);
      // Path only: query strings may carry what must not be logged.
      const line = { method: ctx.method, path: ctx.path, ip: ctx.ip, status: ctx.status, ms: Math.round(seconds * 1e4) / 10, scriptId: ctx.state.account?.scriptId };
      if (PROBE_PATHS.has(ctx.path)) ctx.state.log.debug(line, 'request');
      else ctx.state.log.info(line, 'request');
    }
  };
}
