// Small pieces the admin routes share: query parameters, page sizes, the JSON body of an
// operator's request, and the `admin change` log line every mutation writes.
import type { Next } from 'koa';
import { AppError } from '../errors.ts';
import { readJsonBody } from '../http/read-json-body.ts';
import type { JsonLimits } from '../http/json-safety.ts';
import { RULE_LIMITS } from '../rules/check-expression.ts';
import type { AppContext } from '../http/types.ts';

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 500;
/** Rule documents may be up to 1 MiB; an admin body has room for one plus its envelope. */
const ADMIN_BODY_BYTES = 2 * 1024 * 1024;
/**
 * An operator's body is walked like an intake body (forbidden keys, non-finite numbers) but
 * deep enough for a rule expression at its own limit, whose check then names the rule; text
 * nested deeper is refused before it is parsed. ADMIN_BODY_BYTES bounds the rest.
 */
const ADMIN_JSON_LIMITS: JsonLimits = {
  maxDepth: RULE_LIMITS.depth + 16,
  maxArrayLength: Infinity,
  maxKeys: Infinity,
  maxStringLength: Infinity,
  maxKeyLength: Infinity,
};

/** One query parameter (the first if repeated); undefined when absent or empty. */
export function param(ctx: AppContext, name: string): string | undefined {
  const v = ctx.query[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === '' ? undefined : s;
}

export function intParam(ctx: AppContext, name: string): number | undefined {
  const s = param(ctx, name);
  if (s === undefined) return undefined;
  const n = Number(s);
  if (!Number.isSafeInteger(n) || n < 0) throw new AppError('INVALID_VALUE', 400, `${name} must be a whole number (ms since the epoch for times)`, { field: name });
  return n;
}

/** `limit` of a list: 1 to MAX_PAGE, `fallback` when absent. */
export function pageLimit(ctx: AppContext, fallback = DEFAULT_PAGE): number {
  const n = intParam(ctx, 'limit') ?? fallback;
  if (n < 1 || n > MAX_PAGE) throw new AppError('OUT_OF_RANGE', 400, `limit must be between 1 and ${MAX_PAGE}`, { field: 'limit' });
  return n;
}

/**
 * The JSON object body, within ADMIN_JSON_LIMITS. An empty body is `{}`; the admin gate has
 * already refused any type but application/json.
 */
export function jsonBody() {
  const read = readJsonBody({ maxBodyBytes: ADMIN_BODY_BYTES, limits: ADMIN_JSON_LIMITS });
  return async function adminJsonBody(ctx: AppContext, next: Next): Promise<void> {
    if ((ctx.request.length ?? 0) === 0 && !ctx.get('transfer-encoding')) {
      ctx.state.body = {};
      return next();
    }
    if (!ctx.is('application/json')) throw new AppError('UNSUPPORTED_MEDIA_TYPE', 415, 'Send the body as application/json');
    await read(ctx, next);
  };
}

/** The log line of one operator change: what, on which target, by whom (the admin token's name). */
export function adminLog(ctx: AppContext, action: string, target: string, change: unknown): void {
  ctx.state.log.info({ admin: { action, target, author: adminName(ctx), change } }, 'admin change');
}

/** The log line of one operator reading what is masked by default (an event's identifiers), by whom. */
export function adminRevealLog(ctx: AppContext, what: string, target: string): void {
  ctx.state.log.info({ admin: { action: 'reveal', what, target, author: adminName(ctx) } }, 'admin reveal');
}

/** Who is making this admin request: the name of the token the gate accepted. */
export function adminName(ctx: AppContext): string {
  const name = ctx.state.admin?.name;
  if (name === undefined) throw new Error('adminName() outside the admin gate');
  return name;
}
