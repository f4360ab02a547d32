// Endpoints 1–3: the standard intake, the test endpoint and the Event Create path.
// Each route is a flat list of small middlewares; the handlers only decide the reply.
import Router from '@koa/router';
import type { Next } from 'koa';
import { AppError } from '../errors.ts';
import type { Account } from '../accounts/types.ts';
import type { Authenticator } from '../accounts/authenticator.ts';
import { canUseStandardIntake, tierRank } from '../accounts/tiers.ts';
import type { ValidationResult } from '../schema/types.ts';
import type { EventStatus, EventStore } from '../store/types.ts';
import { acceptEvents, validateFor } from '../intake/accept-events.ts';
import type { DestinationPreview, PreviewDeps } from '../pipeline/preview-event.ts';
import { testFeedback } from '../pipeline/test-feedback.ts';
import type { DestinationCache } from '../destinations/destination-cache.ts';
import type { PlatformChecker } from '../delivery/platform-check.ts';
import type { EventWriter } from '../store/event-writer.ts';
import type { Metrics } from './metrics.ts';
import { ack, type Level } from './responses.ts';
import { issueString } from '../schema/issue-text.ts';
import { intakeGuard, postOnly } from './intake-guard.ts';
import { boundTestResponseText } from './bound-response.ts';
import { authenticate } from './authenticate.ts';
import type { AuthFailureLimiter } from './auth-failure-limit.ts';
import { readJsonBody } from './read-json-body.ts';
import { rateLimit, type TokenBucketLimiter } from './rate-limit.ts';
import type { BodyByteBudget } from './body-byte-budget.ts';
import type { AppContext, AppState } from './types.ts';

export const INTAKE_PATHS = {
  event: '/webhooks/service/event',
  test: '/webhooks/service/event/test',
  standard: '/service/standard/event',
} as const;

/** What Koa's `ctx.type = 'application/json'` sets, without its look-up. */
const JSON_TYPE = 'application/json; charset=utf-8';
/** Endpoint 1's acknowledgement, serialised once. */
const EVENT_RECEIVED = JSON.stringify(ack('Event received', 0));

export interface IntakeDeps {
  authenticator: Authenticator;
  /** The event writer (src/intake/intake-writer.ts): commit, wake delivery, publish on the live feed. */
  writer: EventWriter;
  metrics: Metrics;
  maxBodyBytes: number;
  events: Pick<EventStore, 'seenProducts' | 'isDuplicate'>;
  preview: PreviewDeps;
  destinations: DestinationCache;
  limiter: TokenBucketLimiter;
  rateLimitDefault: number;
  /** Failed authentications per client address, checked before authentication. */
  authFailures?: AuthFailureLimiter;
  /** Body bytes per second per account, charged before the body is parsed. */
  bodyBytes: BodyByteBudget;
  /** Sends endpoint 2's previewed requests to the platforms' validation paths (`?validate=platform`). */
  platformChecks: PlatformChecker;
}

/** Endpoints 1–3 and batch intake: enabled, FLEX or above, with the add-on. */
export function standardGate(a: Account): AppError | null {
  if (!a.enabled) return new AppError('ACCESS_NOT_ENABLED', 403, 'This account is disabled');
  if (tierRank(a.tier) < tierRank('FLEX')) {
    return new AppError('ACCESS_NOT_ENABLED', 403, `The ${a.tier} plan does not include the tracking webhook; FLEX or above is needed`);
  }
  if (!a.addon) return new AppError('ACCESS_NOT_ENABLED', 403, 'The tracking webhook add-on is not enabled for this account');
  return canUseStandardIntake(a) ? null : new AppError('ACCESS_NOT_ENABLED', 403, 'Access is not enabled');
}

/** Endpoint 2's `?validate=platform`: true when asked; any other value of `validate` is refused. */
function wantsPlatformCheck(ctx: AppContext): boolean {
  // Most requests carry `?id=…` only: no query parse for them (a key can be percent-encoded).
  const q = ctx.querystring;
  if (!q.includes('validate') && !q.includes('%')) return false;
  const v = ctx.query.validate;
  if (v === undefined) return false;
  if (v === 'platform') return true;
  throw new AppError('INVALID_VALUE', 400, 'validate must be platform (given once): ?validate=platform asks each platform to check the previewed requests', { field: 'validate' });
}

/**
 * Endpoints 1 and 3: one event through the shared accept path (acceptEvents: validated there
 * unless `result` is given, then stored), its stored status back.
 */
async function acceptOne(deps: IntakeDeps, ctx: AppContext, source: string, result?: ValidationResult): Promise<EventStatus> {
  const { account, requestId, log, body } = ctx.state;
  const [one] = await acceptEvents(deps, { account: account!, requestId, source, log }, [{ body, result }]);
  return one.status;
}

export function intakeRouter(deps: IntakeDeps): Router<AppState> {
  const router = new Router<AppState>();
  /**
   * Gates that refuse (throw) or call next, then readJsonBody, which puts the parsed body on
   * ctx.state.body for the route's handler. `stores`: the route writes events, so a full intake
   * queue refuses it at the door.
   */
  const chain = (route: string, stores: boolean) => [
    intakeGuard({ route, maxBodyBytes: deps.maxBodyBytes, writer: stores ? deps.writer : undefined }),
    authenticate({ authenticator: deps.authenticator, gate: standardGate, failures: deps.authFailures }),
    // Charged before a byte of the body is read: a refused body has still cost its account.
    rateLimit({ limiter: deps.limiter, defaultPerSecond: deps.rateLimitDefault }),
    deps.bodyBytes.beforeRead,
    readJsonBody({ maxBodyBytes: deps.maxBodyBytes, afterRead: (ctx, raw) => deps.bodyBytes.afterRead(ctx, raw.length) }),
  ];

  // 1: acknowledge after commit, valid or not; invalid events are kept as `rejected`.
  postOnly(router, INTAKE_PATHS.event, 'event', ...chain('event', true), async function acceptEvent(ctx: AppContext, _next: Next) {
    await acceptOne(deps, ctx, 'event');
    // The same answer every time: its text made once, with the type an object body would get.
    ctx.set('Content-Type', JSON_TYPE);
    ctx.body = EVENT_RECEIVED;
  });

  // 2: synchronous feedback, nothing stored, nothing sent: validation, the funnel check,
  // and per destination the exact requests it would get. With ?validate=platform (and only
  // then) each such request is also sent to its platform's validation path, and the verdict
  // goes beside its preview.
  postOnly(router, INTAKE_PATHS.test, 'event_test', ...chain('event_test', false), async function testEvent(ctx: AppContext, _next: Next) {
    const validate = wantsPlatformCheck(ctx);
    const result = validateFor(ctx.state.account!, ctx.state.body, deps.metrics);
    const warnings = result.warnings.map(issueString);
    let preview: DestinationPreview[] = [];
    if (result.event) {
      const account = ctx.state.account!;
      const destinations = await deps.destinations.list(account.scriptId);
      const feedback = await testFeedback(deps, {
        account,
        destinations,
        event: result.event,
        eventId: result.event.event.id ?? `test-${ctx.state.requestId}`,
        now: Date.now(),
        validate,
      });
      warnings.push(...feedback.warnings);
      preview = feedback.preview;
      if (feedback.checks !== undefined) await deps.platformChecks.validate(preview, feedback.checks, destinations);
    }
    const failed = result.errors.length > 0;
    const level: Level = failed ? 2 : warnings.length > 0 ? 1 : 0;
    // Serialised here once: the size bound and the response share the text.
    ctx.set('Content-Type', JSON_TYPE);
    ctx.body = boundTestResponseText(ack(failed ? 'Event processing failed: see errors' : 'Event received and processed', level, {
      errors: result.errors.map(issueString),
      warnings,
      data_received: ctx.state.body,
      data_normalized: result.event ?? null,
      preview,
    }), undefined, ctx.state.rawBody);
  });

  // 3: the Event Create path: 400 with coded errors, or stored and 200.
  postOnly(router, INTAKE_PATHS.standard, 'standard', ...chain('standard', true), async function createEvent(ctx: AppContext, _next: Next) {
    const result = validateFor(ctx.state.account!, ctx.state.body, deps.metrics);
    if (result.errors.length > 0) {
      ctx.status = 400;
      ctx.body = {
        status: 'error',
        message: `Validation failed with ${result.errors.length} error${result.errors.length === 1 ? '' : 's'}`,
        errors: result.errors,
        warnings: result.warnings,
      };
      return;
    }
    const status = await acceptOne(deps, ctx, 'standard', result);
    ctx.body = {
      status: 'success',
      message: status === 'duplicate' ? 'Duplicate event: already received, not forwarded again' : 'Event accepted',
      warnings: result.warnings,
    };
  });

  return router;
}
