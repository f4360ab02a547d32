// The one error funnel: coded errors become the family's error body; anything else
// is logged and answered with a bare 500 whose body reveals nothing.
import type { Next } from 'koa';
import { isAppError, RENDER_ANSWER, rendersItself, type ErrorCode } from '../errors.ts';
import { errorBody } from './responses.ts';
import type { AppContext } from './types.ts';

export function errorFunnel() {
  return async function errorFunnelMiddleware(ctx: AppContext, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.body = errorBody('plain', 'ENDPOINT_NOT_FOUND', `No route for ${ctx.method} ${ctx.path}`);
      }
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
