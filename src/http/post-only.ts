// Registers a POST-only intake route so that it reads as one: POST runs the route's chain, and
// every other method on the path is answered 405 METHOD_NOT_ALLOWED (the error funnel adds
// Allow: POST), counted under the route's name, as when the route took every method.
import type Router from '@koa/router';
import type { RouterMiddleware } from '@koa/router';
import { METHODS } from 'node:http';
import { methodNotAllowed } from './intake-guard.ts';
import type { AppContext, AppState } from './types.ts';

const OTHER_METHODS = METHODS.filter((m) => m !== 'POST');

export function postOnly(router: Router<AppState>, path: string, route: string, ...chain: RouterMiddleware<AppState>[]): void {
  router.post(path, ...chain);
  router.register(path, OTHER_METHODS, async function refuseMethod(ctx: AppContext) {
    ctx.state.route = route;
    throw methodNotAllowed(ctx);
  });
}
