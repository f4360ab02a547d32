// Script id + access token → account, then the plan gate. An unknown id and a wrong
// token get the same body, and the authenticator does the same work for both.
import type { Next } from 'koa';
import { AppError } from '../errors.ts';
import { SCRIPT_ID_RE } from '../accounts/credentials.ts';
import type { Authenticator } from '../accounts/authenticator.ts';
import type { Account } from '../accounts/types.ts';
import type { AppContext } from './types.ts';

export const TOKEN_HEADER = 'x-service-access-token';
const MAX_TOKEN_LENGTH = 512;

export interface AuthenticateOptions {
  authenticator: Authenticator;
  /** Why the account may not use this endpoint, or null when it may. */
  gate: (a: Account) => AppError | null;
}

export function authenticate(opts: AuthenticateOptions) {
  return async function authenticateMiddleware(ctx: AppContext, next: Next): Promise<void> {
    const id = ctx.query.id;
    if (typeof id !== 'string' || !SCRIPT_ID_RE.test(id)) {
      throw new AppError('AUTH_MISSING', 401, 'The query parameter id must be given once, as the 8-character script id');
    }
    const token = ctx.get(TOKEN_HEADER);
    if (token === '') {
      throw new AppError('AUTH_MISSING', 401, 'The X-Service-Access-Token header is missing');
    }
    const account =
      token.length > MAX_TOKEN_LENGTH ? null : await opts.authenticator.authenticate(id, token);
    if (!account) {
      throw new AppError('INVALID_CREDENTIALS', 401, 'The script id and access token do not match an active credential');
    }
    ctx.state.account = account;
    const refusal = opts.gate(account);
    if (refusal) throw refusal;
    await next();
  };
}
