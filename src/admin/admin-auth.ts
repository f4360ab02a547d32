// The gate in front of /admin/*: off (404) without ADMIN_TOKEN, otherwise a bearer token
// compared in constant time (both sides hashed first, so lengths never leak either).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Next } from 'koa';
import { AppError } from '../errors.ts';
import type { AppContext } from '../http/types.ts';

export const ADMIN_PREFIX = '/admin';

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

export const isAdminPath = (path: string): boolean => path === ADMIN_PREFIX || path.startsWith(`${ADMIN_PREFIX}/`);

export function adminGate(token: string | null) {
  const expected = token ? digest(token) : null;
  return async function adminGateMiddleware(ctx: AppContext, next: Next): Promise<void> {
    if (!isAdminPath(ctx.path)) return next();
    ctx.state.family = 'plain';
    ctx.state.route = 'admin';
    if (expected === null) throw new AppError('NOT_FOUND', 404, 'The admin API is off; set ADMIN_TOKEN to turn it on');
    const given = /^Bearer\s+(.+)$/i.exec(ctx.get('authorization'))?.[1]?.trim() ?? '';
    if (given === '' || !timingSafeEqual(digest(given), expected)) {
      ctx.set('WWW-Authenticate', 'Bearer realm="admin"');
      throw given === ''
        ? new AppError('AUTH_MISSING', 401, 'The admin API needs Authorization: Bearer <ADMIN_TOKEN>')
        : new AppError('INVALID_CREDENTIALS', 401, 'The bearer token does not match ADMIN_TOKEN');
    }
    ctx.set('Cache-Control', 'no-store');
    await next();
  };
}
