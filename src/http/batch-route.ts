// Batch intake: POST /webhooks/service/events with {"batch": [event, …]}. Same
// credentials, plan gate and per-event validation as endpoint 1, through the same accept
// path; the whole batch is committed in one transaction and answered after the commit.
// The body is read as a stream and refused as soon as it passes MAX_BATCH_BYTES.
// The account pays before its body is parsed: one token of its rate and the body's bytes
// (body-byte-budget.ts) before a byte is read, the rest of its events once they are
// counted. The envelope's members are checked on the text, so a body with another member
// or a second "batch" is refused without being parsed.
import Router from '@koa/router';
import type { Next } from 'koa';
import { AppError } from '../errors.ts';
import type { Account } from '../accounts/types.ts';
import type { Authenticator } from '../accounts/authenticator.ts';
import type { Issue } from '../schema/types.ts';
import { acceptEvents, type AcceptDeps, type AcceptItem } from '../intake/accept-events.ts';
import { ack, type Level } from './responses.ts';
import { intakeGuard, postOnly } from './intake-guard.ts';
import type { EventWriter } from '../store/event-writer.ts';
import { authenticate } from './authenticate.ts';
import type { AuthFailureLimiter } from './auth-failure-limit.ts';
import { readJsonBody } from './read-json-body.ts';
import { checkJsonSafety, DEFAULT_JSON_LIMITS } from './json-safety.ts';
import { rateLimit, takeForAccount, type TokenBucketLimiter } from './rate-limit.ts';
import type { BodyByteBudget } from './body-byte-budget.ts';
import { topLevelKeys } from './json-top-keys.ts';
import type { AppContext, AppState } from './types.ts';

export const BATCH_PATH = '/webhooks/service/events';

export interface BatchDeps extends AcceptDeps {
  writer: Pick<EventWriter, 'writeMany' | 'full'>;
  authenticator: Authenticator;
  gate: (a: Account) => AppError | null;
  authFailures?: AuthFailureLimiter;
  limiter: TokenBucketLimiter;
  rateLimitDefault: number;
  bodyBytes: BodyByteBudget;
  /** Per-event byte cap: endpoint 1's body limit. */
  maxBodyBytes: number;
  maxBatchEvents: number;
  maxBatchBytes: number;
}

/** One entry of the answer's `results`: an event that was not accepted cleanly. */
export interface BatchResult {
  index: number;
  id: string | null;
  status: 'rejected' | 'duplicate';
  errors: Issue[];
  warnings: Issue[];
}

/**
 * Deepest nesting of a batch body, refused whole before it is parsed. An event nested deeper
 * than endpoint 1's limit but within this is rejected on its own, its path named.
 */
export const BATCH_MAX_DEPTH = 2 * DEFAULT_JSON_LIMITS.maxDepth;

/**
 * 400 for an envelope with a member besides `batch`, or `batch` twice. Only `batch` is walked
 * (event by event): any other member would be parsed and kept unchecked, and of two `batch`
 * members the parser would build both and keep the last.
 */
function refuseMembers(keys: readonly string[]): void {
  const seen = new Set<string>();
  for (const key of keys) {
    const name = key.slice(0, 64);
    if (key !== 'batch') throw new AppError('INVALID_BODY', 400, `Unknown member "${name}": the body is {"batch": [event, …]} and nothing else`, { field: name });
    if (seen.has(key)) throw new AppError('INVALID_BODY', 400, `The member "${name}" is given more than once: the body is {"batch": [event, …]} with one "batch"`, { field: name });
    seen.add(key);
  }
}

/** The batch's events, or a 400/413 refusal of the whole request. */
function eventsOf(body: Record<string, unknown>, max: number): unknown[] {
  const batch = body.batch;
  if (batch === undefined) throw new AppError('INVALID_BODY', 400, 'The body must have a "batch" member: an array of events', { field: 'batch' });
  refuseMembers(Object.keys(body));
  if (!Array.isArray(batch)) throw new AppError('INVALID_BODY', 400, '"batch" must be an array of events', { field: 'batch' });
  if (batch.length === 0) throw new AppError('INVALID_BODY', 400, '"batch" is empty; send 1 to ' + max + ' events', { field: 'batch' });
  if (batch.length > max) throw new AppError('PAYLOAD_TOO_LARGE', 413, `"batch" has ${batch.length} events; at most ${max} are allowed per request`, { field: 'batch' });
  return batch;
}

/** Endpoint 1's per-event limits, applied to one event of the batch: issues when it breaks one. */
function refusal(event: unknown, index: number, maxBytes: number, checkBytes: boolean): Issue[] | undefined {
  const field = (f: string) => (f === '' ? `batch[${index}]` : `batch[${index}].${f}`);
  if (event === null || typeof event !== 'object' || Array.isArray(event)) {
    return [{ field: field(''), code: 'INVALID_BODY', message: 'Each event of the batch must be a JSON object' }];
  }
  const problem = checkJsonSafety(event, DEFAULT_JSON_LIMITS);
  if (problem) return [{ field: field(problem.field), code: 'INVALID_BODY', message: problem.message }];
  if (checkBytes && Buffer.byteLength(JSON.stringify(event)) > maxBytes) {
    return [{ field: field(''), code: 'PAYLOAD_TOO_LARGE', message: `The event is larger than ${maxBytes} bytes` }];
  }
  return undefined;
}

const idOf = (event: unknown): string | null => {
  const ev = event !== null && typeof event === 'object' ? (event as { event?: { id?: unknown } }).event : undefined;
  return ev !== null && typeof ev === 'object' && typeof ev.id === 'string' ? ev.id.slice(0, 128) : null;
};

export function batchRouter(deps: BatchDeps): Router<AppState> {
  const router = new Router<AppState>();
  const rate = { limiter: deps.limiter, defaultPerSecond: deps.rateLimitDefault, unit: 'events' } as const;
  postOnly(
    router,
    BATCH_PATH,
    'batch',
    intakeGuard({ route: 'batch', maxBodyBytes: deps.maxBatchBytes, writer: deps.writer }),
    authenticate({ authenticator: deps.authenticator, gate: deps.gate, failures: deps.authFailures }),
    rateLimit(rate),
    deps.bodyBytes.beforeRead,
    async function bodyNotJson(ctx: AppContext, next: Next) {
      // Batch intake answers every malformed body with INVALID_BODY, unparseable JSON included.
      try {
        await next();
      } catch (err) {
        if (err instanceof AppError && err.code === 'INVALID_JSON') throw new AppError('INVALID_BODY', 400, 'The body is not valid JSON');
        throw err;
      }
    },
    readJsonBody({
      maxBodyBytes: deps.maxBatchBytes,
      limits: false,
      maxDepth: BATCH_MAX_DEPTH,
      afterRead: (ctx, raw) => deps.bodyBytes.afterRead(ctx, raw.length),
      beforeParse(raw) {
        const keys = topLevelKeys(raw);
        if (keys) refuseMembers(keys);
      },
    }),
    async function acceptBatch(ctx: AppContext, _next: Next) {
      const events = eventsOf(ctx.state.body!, deps.maxBatchEvents);
      const account = ctx.state.account!;
      // The request's own token was taken before its body was read.
      if (events.length > 1) await takeForAccount(rate, account, events.length - 1);
      // Only a body larger than endpoint 1's limit can hold an event over it.
      const raw = (ctx.request as { rawBody?: string }).rawBody ?? '';
      const checkBytes = raw.length > deps.maxBodyBytes || Buffer.byteLength(raw) > deps.maxBodyBytes;
      const items: AcceptItem[] = events.map((body, i) => ({ body, refused: refusal(body, i, deps.maxBodyBytes, checkBytes) }));
      const { requestId, log } = ctx.state;
      const outcomes = await acceptEvents(deps, { account, requestId, source: 'batch', log }, items);

      // Accepted events are counted, not listed: nearly every event carries some warning,
      // and listing them would echo the batch back. The test endpoint gives that feedback.
      const results: BatchResult[] = [];
      outcomes.forEach((o, index) => {
        if (o.status !== 'accepted') results.push({ index, id: idOf(events[index]), status: o.status, errors: o.result.errors, warnings: o.result.warnings });
      });
      const rejected = results.filter((r) => r.status === 'rejected').length;
      const duplicates = results.length - rejected;
      const accepted = outcomes.length - results.length;
      const level: Level = results.length > 0 ? 1 : 0;
      ctx.body = ack(`Batch received: ${accepted} accepted, ${rejected} rejected, ${duplicates} duplicate${duplicates === 1 ? '' : 's'}`, level, {
        accepted, rejected, duplicates, results,
      });
    },
  );
  return router;
}
