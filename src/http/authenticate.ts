// Script id + access token → account, then the plan gate. An unknown id and a wrong
// token get the same body, and the authenticator does the same work for both. With a
// failure limiter, an address that failed too often is refused (429) before any lookup,
// and each 401 counts against it (and against the pair of it and the account named, when
// that account is real).
import type { Next } from 'koa';
import { AppError, unavailable } from '../errors.ts';
import { SCRIPT_ID_RE } from '../accounts/credentials.ts';
import type { Authenticator } from '../accounts/authenticator.ts';
import type { Account } from '../accounts/types.ts';
import type { AppContext } from './types.ts';
import type { AuthFailureLimiter } from './auth-failure-limit.ts';
import { queryId } from './query-id.ts';

export const TOKEN_HEADER = 'x-service-access-token';
const MAX_TOKEN_LENGTH = 512;

export interface AuthenticateOptions {
  authenticator: Authenticator;
  /** Why the account may not use this endpoint, or null when it may. */
  gate: (a: Account) => AppError | null;
  /** Failed authentications per client address (see auth-failure-limit.ts). */
  failures?: AuthFailureLimiter;
}

/** 429 before authentication when the client address has failed too often (see auth-failure-limit.ts for `scriptId`). */
export function refuseIfBlocked(failures: AuthFailureLimiter | undefined, ip: string, scriptId?: string): void {
  const wait = failures?.blockedFor(ip, scriptId) ?? 0;
  if (wait > 0) {
    throw new AppError('RATE_LIMITED', 429, `Too many failed authentications from this address; retry after ${wait} s`, { retryAfter: wait });
  }
}

export function authenticate(opts: AuthenticateOptions) {
  return async function authenticateMiddleware(ctx: AppContext, next: Next): Promise<void> {
    // A blocked address may still use an account the server has just seen and that has not
    // failed from there lately: that costs no lookup, and keeps a good client behind a busy
    // address going while a sprayer (of script ids or of tokens for a real one) waits.
    refuseIfBlocked(opts.failures, ctx.ip, realAccount(ctx, opts.authenticator));
    let account: Account;
    try {
      account = await credentialsOf(ctx, opts.authenticator);
    } catch (err) {
      // A wrong token for a real account counts against the pair as well as the address.
      if (err instanceof AppError && err.status === 401) opts.failures?.fail(ctx.ip, realAccount(ctx, opts.authenticator));
      // The store could not answer (a database that is down or restarting): retry later, not a 500.
      if (!(err instanceof AppError)) throw unavailable(err, 'check credentials');
      throw err;
    }
    ctx.state.account = account;
    const refusal = opts.gate(account);
    if (refusal) throw refusal;
    await next();
  };
}

/** The request's script id when it names an account the server has just seen (no lookup), else undefined. */
function realAccount(ctx: AppContext, authenticator: Authenticator): string | undefined {
  const id = queryId(ctx);
  return typeof id === 'string' && authenticator.isCachedAccount(id) ? id : undefined;
}

async function credentialsOf(ctx: AppContext, authenticator: Authenticator): Promise<Account> {
  const id = queryId(ctx);
  if (typeof id !== 'string' || !SCRIPT_ID_RE.test(id)) {
    throw new AppError('AUTH_MISSING', 401, 'The query parameter id must be given once, as the 8-character script id');
  }
  const token = ctx.get(TOKEN_HEADER);
  if (token === '') {
    throw new AppError('AUTH_MISSING', 401, 'The X-Service-Access-Token header is missing');
  }
  const account = token.length > MAX_TOKEN_LENGTH ? null : await authenticator.authenticate(id, token);
  if (!account) {
    throw new AppError('INVALID_CREDENTIALS', 401, 'The script id and access token do not match an active credential');
  }
  return account;
}
