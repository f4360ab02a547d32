// The admin API's gate. gatedRoutes() runs requireAdmin() for every request an admin
// router matches, asking the router itself, so the gate holds however the path is spelt (a
// lower-case prefix check in front of case-insensitive routers once let `/ADMIN/...` by).
// markAdminArea() only labels admin-looking paths for the error shape and answers 404
// while the admin API is off; it grants nothing.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Middleware, Next } from 'koa';
import type Router from '@koa/router';
import { AppError } from '../errors.ts';
import type { AdminToken } from '../config.ts';
import type { AppContext, AppState } from '../http/types.ts';

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** Methods that change state: each must carry `Content-Type: application/json`. */
const CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The request path as a router might end up seeing it: percent-escapes decoded, case folded,
 * doubled slashes collapsed and dot segments resolved. Used only to label, never to grant.
 */
export function canonicalPath(path: string): string {
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // A malformed escape: keep the raw text, which still folds and collapses.
  }
  const out: string[] = [];
  for (const segment of decoded.toLowerCase().replace(/\\/g, '/').split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') out.pop();
    else out.push(segment);
  }
  return `/${out.join('/')}`;
}

export const isAdminPath = (path: string): boolean => {
  const p = canonicalPath(path);
  return p === '/admin' || p.startsWith('/admin/');
};

/** Labels admin-looking requests (errors in the plain shape) and, with the API off, answers 404. */
export function markAdminArea(enabled: boolean) {
  return async function markAdminAreaMiddleware(ctx: AppContext, next: Next): Promise<void> {
    if (!isAdminPath(ctx.path)) return next();
    ctx.state.family = 'plain';
    ctx.state.route = 'admin';
    if (!enabled) throw new AppError('NOT_FOUND', 404, 'The admin API is off; set ADMIN_TOKEN to turn it on');
    await next();
  };
}

/**
 * The admin credential check: a bearer token compared in constant time with every configured
 * token (both sides hashed first, so lengths never leak, and every token is compared so the
 * time does not say which one matched). The match's name goes on ctx.state.admin, the author
 * of what the request changes. A state-changing request must be application/json, which a
 * browser cannot send cross-origin without a preflight.
 *
 * @example koa.use(gatedRoutes(adminRouter(deps), requireAdmin(config.adminTokens)));
 */
export function requireAdmin(tokens: readonly AdminToken[]) {
  const expected = tokens.map((t) => ({ name: t.name, hash: digest(t.token) }));
  return async function requireAdminMiddleware(ctx: AppContext, next: Next): Promise<void> {
    ctx.state.family = 'plain';
    if (!ctx.state.route.startsWith('admin')) ctx.state.route = 'admin';
    const given = /^Bearer\s+(.+)$/i.exec(ctx.get('authorization'))?.[1]?.trim() ?? '';
    const hash = digest(given);
    let name: string | null = null;
    for (const e of expected) {
      if (timingSafeEqual(hash, e.hash) && given !== '') name = e.name;
    }
    if (name === null) {
      ctx.set('WWW-Authenticate', 'Bearer realm="admin"');
      throw given === ''
        ? new AppError('AUTH_MISSING', 401, 'The admin API needs Authorization: Bearer <ADMIN_TOKEN>')
        : new AppError('INVALID_CREDENTIALS', 401, 'The bearer token matches no admin token');
    }
    if (CHANGING.has(ctx.method) && ctx.request.type.toLowerCase() !== 'application/json') {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', 415, 'A change through the admin API is sent as Content-Type: application/json (an empty body is {})');
    }
    ctx.state.admin = { name };
    ctx.set('Cache-Control', 'no-store');
    await next();
  };
}

/**
 * The router's routes behind `gate`: whenever the router matches the request (by its own
 * match(), the one its dispatch uses), the gate runs first. Not router.use(): @koa/router
 * 15.7 matches use() middleware case-sensitively while it matches routes without regard to
 * case, so `/ADMIN/x` reaches the route and skips the middleware.
 */
export function gatedRoutes(router: Router<AppState>, gate: Middleware<AppState>): Middleware<AppState> {
  const dispatch = router.routes() as unknown as Middleware<AppState>;
  const gated: Middleware<AppState> = async function gatedRoutesMiddleware(ctx, next) {
    // The path the router's dispatch reads (newRouterPath is a nesting router's rest).
    const path = (ctx as { newRouterPath?: string }).newRouterPath || ctx.path;
    if (!router.match(path, ctx.method).route) return next();
    await gate(ctx, () => dispatch(ctx, next));
  };
  // As on router.routes(): lets the OpenAPI check and the tests list what is mounted.
  return Object.assign(gated, { router });
}
