// Per-account body bytes per second on the intake (INTAKE_BYTES_PER_SECOND). Reading,
// scanning and parsing a body cost CPU by its size, not by the request, so an account
// sending large bodies is held to its own share whatever its request rate. In memory per
// process: it guards this process's CPU (each instance of a cluster grants it on its own).
//
// Charged in two steps, both before the body is parsed:
// - before a byte is read, the declared Content-Length (nothing when the body is chunked):
//   refused 429 at once while the account has spent its budget or is in debt;
// - once it is read, what the body held beyond that (an inflated gzip body, a chunked one):
//   charged whatever the balance, so the account's next requests wait out the debt, and
//   refused 429 before it is parsed when the account could not afford it.
// A request refused later (a 400 body) has still paid for its bytes.
import type { Next } from 'koa';
import { AppError } from '../errors.ts';
import { DEFAULT_INTAKE_BYTES_PER_SECOND } from '../config.ts';
import { createTokenBuckets, type MemoryTokenBuckets } from './rate-limit.ts';
import type { AppContext } from './types.ts';


export interface BodyByteBudget {
  /** Middleware after authentication, before the body is read. */
  beforeRead(ctx: AppContext, next: Next): Promise<void>;
  /** Once the body is read, before it is scanned or parsed: `chars` is the text's length. */
  afterRead(ctx: AppContext, chars: number): void;
}

const DIGITS = /^\d+$/;

/** The declared body length, 0 when none is (a chunked body). */
function declared(ctx: AppContext): number {
  const header = ctx.get('content-length');
  return DIGITS.test(header) ? Number(header) : 0;
}

export function createBodyByteBudget(opts: { perSecond?: number; buckets?: MemoryTokenBuckets } = {}): BodyByteBudget {
  const perSecond = opts.perSecond ?? DEFAULT_INTAKE_BYTES_PER_SECOND;
  const buckets = opts.buckets ?? createTokenBuckets();
  const refuse = (wait: number) =>
    new AppError('RATE_LIMITED', 429, `More than ${perSecond} body bytes per second for this account; retry after ${wait} s`, { retryAfter: wait });

  return {
    async beforeRead(ctx, next) {
      const wait = buckets.take(ctx.state.account!.scriptId, perSecond, declared(ctx));
      if (wait > 0) throw refuse(wait);
      await next();
    },
    afterRead(ctx, chars) {
      const paid = declared(ctx);
      const beyond = chars - paid;
      if (beyond <= 0) return;
      // Judged as the whole body would have been before a byte was read: a body an account
      // with a full budget could send (say, a large gzip one) passes whatever the clock did meanwhile.
      const wait = buckets.charge(ctx.state.account!.scriptId, perSecond, beyond, undefined, paid);
      if (wait > 0) throw refuse(wait);
    },
  };
}
