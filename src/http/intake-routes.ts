// Endpoints 1–3: the standard intake, the test endpoint and the Event Create path.
// Each route is a flat list of small middlewares; the handlers only decide the reply.
import Router from '@koa/router';
import { randomUUID } from 'node:crypto';
import type { Next } from 'koa';
import { AppError, unavailable } from '../errors.ts';
import type { Account } from '../accounts/types.ts';
import type { Authenticator } from '../accounts/authenticator.ts';
import { approvedEvents } from '../accounts/account-service.ts';
import { canUseStandardIntake, tierRank } from '../accounts/tiers.ts';
import { validateEvent } from '../schema/validate-event.ts';
import type { ValidationContext, ValidationResult } from '../schema/types.ts';
import type { EventRecord, EventStatus, EventStore } from '../store/types.ts';
import type { DestinationPreview, PreviewDeps } from '../pipeline/preview-event.ts';
import { testFeedback } from '../pipeline/test-feedback.ts';
import type { DestinationCache } from '../destinations/destination-cache.ts';
import type { EventWriter } from '../store/event-writer.ts';
import type { Metrics } from './metrics.ts';
import { ack, issueString, type Level } from './responses.ts';
import { intakeGuard } from './intake-guard.ts';
import { boundTestResponse } from './bound-response.ts';
import { authenticate } from './authenticate.ts';
import type { AuthFailureLimiter } from './auth-failure-limit.ts';
import { readJsonBody } from './read-json-body.ts';
import { rateLimit, type TokenBucketLimiter } from './rate-limit.ts';
import type { AppContext, AppState } from './types.ts';

export const INTAKE_PATHS = {
  event: '/webhooks/service/event',
  test: '/webhooks/service/event/test',
  standard: '/service/standard/event',
} as const;

export interface IntakeDeps {
  authenticator: Authenticator;
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
}

function standardGate(a: Account): AppError | null {
  if (!a.enabled) return new AppError('ACCESS_NOT_ENABLED', 403, 'This account is disabled');
  if (tierRank(a.tier) < tierRank('FLEX')) {
    return new AppError('ACCESS_NOT_ENABLED', 403, `The ${a.tier} plan does not include the tracking webhook; FLEX or above is needed`);
  }
  if (!a.addon) return new AppError('ACCESS_NOT_ENABLED', 403, 'The tracking webhook add-on is not enabled for this account');
  return canUseStandardIntake(a) ? null : new AppError('ACCESS_NOT_ENABLED', 403, 'Access is not enabled');
}

/** Validation context per account object; the authenticator hands out a new object when the account changes. */
const contexts = new WeakMap<Account, ValidationContext>();
function validationContext(a: Account): ValidationContext {
  let c = contexts.get(a);
  if (!c) {
    c = { approvedEvents: approvedEvents(a), defaultTaxRate: a.taxRate, host: a.host };
    contexts.set(a, c);
  }
  return c;
}

function evaluate(ctx: AppContext, metrics: Metrics): ValidationResult {
  const result = validateEvent(ctx.state.body, validationContext(ctx.state.account!));
  for (const e of result.errors) metrics.validationFailures.inc({ code: e.code });
  return result;
}

function record(state: AppState, source: string, result: ValidationResult): EventRecord {
  const body = state.body!;
  const ev = (body.event ?? null) as Record<string, unknown> | null;
  const name = ev && typeof ev.name === 'string' ? ev.name.slice(0, 128) : null;
  const eventId = ev && typeof ev.id === 'string' ? ev.id.slice(0, 128) : null;
  const accepted = result.errors.length === 0;
  return {
    id: randomUUID(),
    scriptId: state.account!.scriptId,
    name,
    eventId,
    status: accepted ? 'accepted' : 'rejected',
    source,
    requestId: state.requestId,
    receivedAt: Date.now(),
    errors: result.errors,
    warnings: result.warnings,
    payload: accepted ? result.event : body,
  };
}

async function store(deps: IntakeDeps, row: EventRecord, ctx: AppContext): Promise<EventStatus> {
  let status: EventStatus;
  try {
    status = await deps.writer.write(row);
  } catch (err) {
    ctx.state.log.error({ err }, 'event commit failed');
    throw unavailable(err);
  }
  deps.metrics.eventsStored.inc({ status });
  return status;
}


export function intakeRouter(deps: IntakeDeps): Router<AppState> {
  const router = new Router<AppState>();
  const chain = (route: string) => [
    intakeGuard({ route, maxBodyBytes: deps.maxBodyBytes }),
    authenticate({ authenticator: deps.authenticator, gate: standardGate, failures: deps.authFailures }),
    rateLimit({ limiter: deps.limiter, defaultPerSecond: deps.rateLimitDefault }),
    readJsonBody({ maxBodyBytes: deps.maxBodyBytes }),
  ];

  // 1: acknowledge after commit, valid or not; invalid events are kept as `rejected`.
  router.all(INTAKE_PATHS.event, ...chain('event'), async function acceptEvent(ctx: AppContext, _next: Next) {
    const result = evaluate(ctx, deps.metrics);
    await store(deps, record(ctx.state, 'event', result), ctx);
    ctx.body = ack('Event received', 0);
  });

  // 2: synchronous feedback, nothing stored, nothing sent: validation, the funnel check,
  // and per destination the exact requests it would get.
  router.all(INTAKE_PATHS.test, ...chain('event_test'), async function testEvent(ctx: AppContext, _next: Next) {
    const result = evaluate(ctx, deps.metrics);
    const warnings = result.warnings.map(issueString);
    let preview: DestinationPreview[] = [];
    if (result.event) {
      const account = ctx.state.account!;
      const feedback = await testFeedback(deps, {
        account,
        destinations: await deps.destinations.list(account.scriptId),
        event: result.event,
        eventId: result.event.event.id ?? `test-${ctx.state.requestId}`,
        now: Date.now(),
      });
      warnings.push(...feedback.warnings);
      preview = feedback.preview;
    }
    const failed = result.errors.length > 0;
    const level: Level = failed ? 2 : warnings.length > 0 ? 1 : 0;
    ctx.body = boundTestResponse(ack(failed ? 'Event processing failed: see errors' : 'Event received and processed', level, {
      errors: result.errors.map(issueString),
      warnings,
      data_received: ctx.state.body,
      data_normalized: result.event ?? null,
      preview,
    }));
  });

  // 3: the Event Create path: 400 with coded errors, or stored and 200.
  router.all(INTAKE_PATHS.standard, ...chain('standard'), async function createEvent(ctx: AppContext, _next: Next) {
    const result = evaluate(ctx, deps.metrics);
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
    const status = await store(deps, record(ctx.state, 'standard', result), ctx);
    ctx.body = {
      status: 'success',
      message: status === 'duplicate' ? 'Duplicate event: already received, not forwarded again' : 'Event accepted',
      warnings: result.warnings,
    };
  });

  return router;
}
