// The door of every intake route: postOnly registers a POST-only route (endpoints 1–3, batch
// intake), and intakeGuard is the cheap checks every intake request passes before credentials
// are looked at or a byte of the body is read: method, content type, declared length, and (for
// the routes that store) whether the intake queue is full.
import type Router from '@koa/router';
import type { RouterMiddleware } from '@koa/router';
import type { Next } from 'koa';
import { METHODS } from 'node:http';
import { AppError, unavailable } from '../errors.ts';
import type { AppContext, AppState } from './types.ts';

export interface IntakeGuardOptions {
  route: string;
  maxBodyBytes: number;
  /** The event writer (src/intake/intake-writer.ts), for a route that stores: full, the request is refused 503 before any work is spent on it. */
  writer?: { full(): boolean };
}

const DIGITS = /^\d+$/;

/** What a POST-only route answers any other method (the error funnel adds Allow: POST). */
export const methodNotAllowed = (ctx: AppContext) => new AppError('METHOD_NOT_ALLOWED', 405, `Use POST on ${ctx.path}`);

const OTHER_METHODS = METHODS.filter((m) => m !== 'POST');

/**
 * Registers a POST-only intake route so that it reads as one: POST runs the route's chain, and
 * every other method on the path is answered 405 METHOD_NOT_ALLOWED (the error funnel adds
 * Allow: POST), counted under the route's name, as when the route took every method.
 */
export function postOnly(router: Router<AppState>, path: string, route: string, ...chain: RouterMiddleware<AppState>[]): void {
  router.post(path, ...chain);
  router.register(path, OTHER_METHODS, async function refuseMethod(ctx: AppContext) {
    ctx.state.route = route;
    throw methodNotAllowed(ctx);
  });
}

/** The checks, as the first middleware of an intake chain. */
export function intakeGuard(opts: IntakeGuardOptions) {
  return async function intakeGuardMiddleware(ctx: AppContext, next: Next): Promise<void> {
    ctx.state.route = opts.route;
    // Behind postOnly only POST gets here; the custom endpoints' routes take every method.
    if (ctx.method !== 'POST') throw methodNotAllowed(ctx);
    // The common case (exactly this header, a declared length) skips type-is's parse; its
    // answer for it is the same: a body of that type.
    const declared = ctx.get('content-length');
    const plainJson = ctx.get('content-type') === 'application/json' && DIGITS.test(declared);
    if (!plainJson && !ctx.is('application/json')) {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', 415, 'Content-Type must be application/json');
    }
    if (declared !== '' && Number(declared) > opts.maxBodyBytes) {
      throw new AppError('PAYLOAD_TOO_LARGE', 413, `The body is larger than ${opts.maxBodyBytes} bytes`);
    }
    // Back-pressure at the door: an overloaded server must refuse in microseconds, not after
    // authenticating, reading and validating a request it cannot store.
    if (opts.writer?.full() === true) throw unavailable();
    await next();
  };
}
