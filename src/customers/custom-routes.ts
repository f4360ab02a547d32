// Endpoint 4: POST /service/custom/<endpoint_name>?id=…&env=production|test. A flat list of
// small middlewares in the documented order of checks (docs/api.md): credentials → tier CUSTOM → endpoint
// of the account's folder → its version → the endpoint's own auth (→ rate limit) → body → handler.
import Router from '@koa/router';
import type { Next } from 'koa';
import { AppError, unavailable } from '../errors.ts';
import type { Account } from '../accounts/types.ts';
import type { Authenticator } from '../accounts/authenticator.ts';
import { canUseCustomEndpoints } from '../accounts/tiers.ts';
import { intakeGuard } from '../http/intake-guard.ts';
import { authenticate, refuseIfBlocked } from '../http/authenticate.ts';
import type { AuthFailureLimiter } from '../http/auth-failure-limit.ts';
import { readJsonBody } from '../http/read-json-body.ts';
import type { AppContext, AppState } from '../http/types.ts';
import type { AuthCheck } from './auth/types.ts';
import { CustomValidationError } from './custom-validation-error.ts';
import { createRateLimiter, TEST_RATE_DEFAULT, type RateDecision, type RateLimit, type RateLimiter } from './rate-limiter.ts';
import { CUSTOM_ENVS, type CustomEnv, type CustomerRegistry, type EndpointVersion, type LoadedEndpoint } from './types.ts';
import { deprecationHeaders, pickVersion, VERSION_HEADER } from './version-selection.ts';
import { versionUseCounter } from './version-metrics.ts';
import { processRequest, type ProcessDeps } from './process-request.ts';

export const CUSTOM_PATH_PREFIX = '/service/custom/';

export interface CustomRouteDeps extends ProcessDeps {
  authenticator: Authenticator;
  maxBodyBytes: number;
  customers: CustomerRegistry;
  /** Production limit when endpoint.json sets none (by default; negotiable per customer). */
  productionRate: (account: Account) => RateLimit;
  limiter?: RateLimiter;
  /** Failed authentications per client address (the account's and the endpoint's own checks). */
  authFailures?: AuthFailureLimiter;
  /** Clock for JWT, HMAC and rate limits (tests). */
  now?: () => number;
}

/** What this route adds to ctx.state. */
interface CustomState extends AppState {
  custom: { startedAt: number; endpoint?: LoadedEndpoint; env?: CustomEnv; version?: EndpointVersion };
}
const stateOf = (ctx: AppContext): CustomState['custom'] => (ctx.state as CustomState).custom;

function customGate(a: Account): AppError | null {
  if (!a.enabled) return new AppError('ACCESS_NOT_ENABLED', 403, 'This account is disabled');
  if (!canUseCustomEndpoints(a)) {
    return new AppError('PLAN_NOT_ELIGIBLE', 403, `Custom endpoints need the CUSTOM plan; this account is on ${a.tier}`);
  }
  return null;
}

/** Where this request's custom state starts (CustomValidationError renders itself in the one error funnel). */
async function startCustom(ctx: AppContext, next: Next): Promise<void> {
  (ctx.state as CustomState).custom = { startedAt: performance.now() };
  await next();
}

function resolveEndpoint(customers: CustomerRegistry) {
  return async function resolveCustomEndpoint(ctx: AppContext, next: Next): Promise<void> {
    const name = (ctx as AppContext & { params: Record<string, string | undefined> }).params.endpoint ?? ctx.path.slice(CUSTOM_PATH_PREFIX.length);
    const slug = ctx.state.account!.customer;
    const endpoint = slug === null ? undefined : customers.get(slug)?.get(name);
    if (!endpoint) {
      // Same answer whether the account is unbound or the folder lacks it: nothing to probe.
      throw new AppError('ENDPOINT_NOT_FOUND', 404, `This account has no custom endpoint named "${name.slice(0, 64)}"`);
    }
    const raw = ctx.query.env;
    if (raw !== undefined && (typeof raw !== 'string' || !(CUSTOM_ENVS as readonly string[]).includes(raw))) {
      throw new CustomValidationError([{
        field: 'env',
        expected_format: 'production or test, given once (default production)',
        message: 'The query parameter env must be production or test',
      }]);
    }
    const state = stateOf(ctx);
    state.endpoint = endpoint;
    state.env = (raw ?? 'production') as CustomEnv;
    ctx.state.route = `custom:${endpoint.name}`;
    await next();
  };
}

/** Picks the version (header, ?version=, the account's pin, else current) and says so in headers. */
async function selectVersion(ctx: AppContext, next: Next): Promise<void> {
  const state = stateOf(ctx);
  const ep = state.endpoint!;
  state.version = pickVersion(ep, { header: ctx.get(VERSION_HEADER), query: ctx.query.version, pin: ctx.state.account!.endpointPins?.[ep.name] });
  announceVersion(ctx, state.version);
  await next();
}

function announceVersion(ctx: AppContext, v: EndpointVersion): void {
  ctx.set(VERSION_HEADER, String(v.version));
  const headers = deprecationHeaders(v);
  if (headers) ctx.set(headers);
}

/** Counts a use of the version once the caller has passed the endpoint's own checks: /metrics and the store. */
function countUse(deps: Pick<CustomRouteDeps, 'metrics' | 'records'>, now: () => number) {
  const counter = versionUseCounter(deps.metrics.registry);
  return async function countVersionUse(ctx: AppContext, next: Next): Promise<void> {
    const { endpoint, version, env } = stateOf(ctx);
    const scriptId = ctx.state.account!.scriptId;
    counter.inc({ script_id: scriptId, customer: endpoint!.customer, endpoint: endpoint!.name, version: String(version!.version), env: env! });
    deps.records.countUse({ scriptId, customer: endpoint!.customer, endpoint: endpoint!.name, version: version!.version, env: env!, at: now() });
    await next();
  };
}

function runChecks(checks: (ep: LoadedEndpoint) => AuthCheck[], now: () => number, failures: AuthFailureLimiter | undefined) {
  return async function customEndpointAuth(ctx: AppContext, next: Next): Promise<void> {
    const list = checks(stateOf(ctx).endpoint!);
    if (list.length > 0) {
      // The endpoint's own secrets get no cached-account pass: a blocked address waits.
      refuseIfBlocked(failures, ctx.ip);
      const req = {
        header: (n: string) => ctx.get(n),
        ip: ctx.ip,
        rawBody: (ctx.request as { rawBody?: string }).rawBody,
        now: now(),
      };
      for (const c of list) {
        const refusal = await c.check(req);
        if (refusal) {
          failures?.fail(ctx.ip);
          throw refusal;
        }
      }
    }
    await next();
  };
}

function rateLimit(limiter: RateLimiter, productionRate: (a: Account) => RateLimit) {
  return async function customRateLimit(ctx: AppContext, next: Next): Promise<void> {
    const { endpoint, env } = stateOf(ctx);
    const cfg = endpoint!.config.rate_limit?.[env!];
    const limit = cfg ? { perMinute: cfg.per_minute, burst: cfg.burst ?? cfg.per_minute } : env === 'test' ? TEST_RATE_DEFAULT : productionRate(ctx.state.account!);
    const key = `${ctx.state.account!.scriptId}\u0000${endpoint!.customer}/${endpoint!.name}\u0000${env}`;
    let decision: RateDecision;
    try {
      decision = await limiter.take(key, limit);
    } catch (err) {
      throw unavailable(err, 'check the rate limit');
    }
    if (!decision.ok) {
      throw new AppError('RATE_LIMITED', 429, `More than ${limit.perMinute} requests per minute to this endpoint (${env}); retry after ${decision.retryAfterSeconds} s`, {
        retryAfter: decision.retryAfterSeconds,
      });
    }
    await next();
  };
}

function validateBody() {
  return async function validateCustomBody(ctx: AppContext, next: Next): Promise<void> {
    const problems = stateOf(ctx).version!.validateBody(ctx.state.body);
    if (problems.length > 0) throw new CustomValidationError(problems);
    await next();
  };
}

export function customRouter(deps: CustomRouteDeps): Router<AppState> {
  const router = new Router<AppState>();
  const now = deps.now ?? Date.now;
  const limiter = deps.limiter ?? createRateLimiter({ now });
  const chain = [
    intakeGuard({ route: 'custom', maxBodyBytes: deps.maxBodyBytes }),
    startCustom,
    authenticate({ authenticator: deps.authenticator, gate: customGate, failures: deps.authFailures }),
    resolveEndpoint(deps.customers),
    selectVersion,
    runChecks((ep) => ep.auth.beforeBody, now, deps.authFailures),
    rateLimit(limiter, deps.productionRate),
    readJsonBody({ maxBodyBytes: deps.maxBodyBytes }),
    runChecks((ep) => ep.auth.afterBody, now, deps.authFailures),
    countUse(deps, now),
    validateBody(),
    async function customEndpoint(ctx: AppContext, _next: Next) {
      const { endpoint, env, startedAt, version } = stateOf(ctx);
      ctx.body = await processRequest(deps, { ctx, endpoint: endpoint!, version: version!, env: env!, startedAt, now: now() });
    },
  ];
  router.all(`${CUSTOM_PATH_PREFIX}:endpoint`, ...chain);
  // Deeper or empty paths under the prefix: the same checks, then the same 404.
  router.all(`${CUSTOM_PATH_PREFIX}{*rest}`, ...chain.slice(0, 4));
  return router;
}

/**
 * The admin API's "send the example in test mode": the endpoint's body checks and handler
 * with env=test for `account`, answered exactly as `env=test` answers; the endpoint's own
 * extra authentication is not asked for (the admin token stands in). Nothing is stored.
 * `version`: as a request would name it; absent, the account's pin, else the current one.
 * `body` absent: that version's example.
 */
export async function runEndpointTest(
  deps: ProcessDeps, ctx: AppContext, endpoint: LoadedEndpoint, account: Account, body: unknown, version?: string,
): Promise<void> {
  ctx.state.account = account;
  ctx.state.family = 'custom';
  await startCustom(ctx, async () => {
    const state = stateOf(ctx);
    state.endpoint = endpoint;
    state.env = 'test';
    const v = pickVersion(endpoint, { header: version ?? '', query: undefined, pin: account.endpointPins?.[endpoint.name] });
    state.version = v;
    announceVersion(ctx, v);
    const sent = body === undefined ? v.example : body;
    if (sent === null || typeof sent !== 'object' || Array.isArray(sent)) {
      throw new AppError('INVALID_BODY', 400, 'The body must be a JSON object');
    }
    ctx.state.body = sent as Record<string, unknown>;
    const problems = v.validateBody(sent);
    if (problems.length > 0) throw new CustomValidationError(problems);
    ctx.body = await processRequest(deps, { ctx, endpoint, version: v, env: 'test', startedAt: state.startedAt, now: Date.now() });
  });
}
