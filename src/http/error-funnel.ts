// The one error funnel: coded errors become the family's error body; anything else
// is logged and answered with a bare 500 whose body reveals nothing. JSON answers are
// serialised here, so a failure to serialise one is funnelled like any other.
import type { Next } from 'koa';
import { AppError, isAppError, RENDER_ANSWER, rendersItself, type ErrorCode } from '../errors.ts';
import { errorBody } from './responses.ts';
import type { AppContext } from './types.ts';

const isPlainJson = (v: unknown): v is object =>
  v !== null && typeof v === 'object' && (Array.isArray(v) || Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);

/**
 * Koa serialises an object body after every middleware has returned, where a failure (a
 * cycle, a BigInt, nesting past the stack) escapes this funnel: a bare text/plain 500 that
 * the access log records as 200. The same JSON.stringify here keeps it inside.
 */
function serialiseJsonBody(ctx: AppContext): void {
  const body: unknown = ctx.body;
  if (!isPlainJson(body)) return;
  let text: string;
  try {
    text = JSON.stringify(body);
  } catch (err) {
    throw new AppError('INTERNAL_ERROR', 500, 'The answer could not be serialised', { cause: err });
  }
  // The type Koa set for the object stays: a string only sets one when there is none.
  ctx.body = text;
}

export function errorFunnel() {
  return async function errorFunnelMiddleware(ctx: AppContext, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.body = errorBody('plain', 'ENDPOINT_NOT_FOUND', `No route for ${ctx.method} ${ctx.path}`);
      }
      serialiseJsonBody(ctx);
    } catch (err) {
      if (rendersItself(err)) {
        const answer = err[RENDER_ANSWER]();
        ctx.status = answer.status;
        ctx.body = answer.body;
        ctx.state.log.debug({ code: answer.code, field: answer.field }, 'request refused');
        return;
      }
      let status = 500;
      let code: ErrorCode = 'INTERNAL_ERROR';
      let message = 'Internal error';
      let field: string | undefined;
      let details: unknown;
      if (isAppError(err)) {
        status = err.status;
        code = err.code;
        field = err.field;
        if (err.expose) {
          message = err.message;
          details = err.details;
        }
        if (err.retryAfter !== undefined) ctx.set('Retry-After', String(err.retryAfter));
        if (status >= 500) ctx.state.log.error({ err: err.cause ?? err, code }, 'request failed');
        else ctx.state.log.debug({ code }, 'request refused');
      } else {
        ctx.state.log.error({ err }, 'unhandled error');
      }
      if (status === 405) ctx.set('Allow', 'POST');
      ctx.status = status;
      ctx.body = errorBody(ctx.state.family ?? 'plain', code, message, field, details);
    }
  };
}
