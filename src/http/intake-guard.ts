// Cheap checks every intake request passes before credentials are looked at or a
// byte of the body is read: method, content type, declared length.
import type { Next } from 'koa';
import { AppError } from '../errors.ts';
import type { AppContext } from './types.ts';

export interface IntakeGuardOptions {
  route: string;
  maxBodyBytes: number;
}

export function intakeGuard(opts: IntakeGuardOptions) {
  return async function intakeGuardMiddleware(ctx: AppContext, next: Next): Promise<void> {
    ctx.state.route = opts.route;
    if (ctx.method !== 'POST') {
      throw new AppError('METHOD_NOT_ALLOWED', 405, `Use POST on ${ctx.path}`);
    }
    if (!ctx.is('application/json')) {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', 415, 'Content-Type must be application/json');
    }
    const declared = ctx.get('content-length');
    if (declared !== '' && Number(declared) > opts.maxBodyBytes) {
      throw new AppError('PAYLOAD_TOO_LARGE', 413, `The body is larger than ${opts.maxBodyBytes} bytes`);
    }
    await next();
  };
}
