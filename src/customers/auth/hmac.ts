// HMAC-SHA256 signature of `<timestamp>.<raw body>` (the scheme Stripe and Slack use):
// the timestamp is signed too, so a captured request cannot be replayed outside the window.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../errors.ts';
import type { HmacAuthConfig } from '../endpoint-config.ts';
import { AuthConfigError, readEnv, type AuthCheck } from './types.ts';

const TIMESTAMP = /^\d{1,12}$/;
const HEX_SIGNATURE = /^(?:sha256=)?([0-9a-fA-F]{64})$/;

/** The signature a client sends: hex HMAC-SHA256 of `${timestamp}.${body}`. */
export function hmacSignature(secret: string, timestamp: number | string, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(body, 'utf8').digest('hex');
}

export function hmacAuth(cfg: HmacAuthConfig, env: NodeJS.ProcessEnv): AuthCheck {
  const secret = cfg.secret ?? readEnv(env, cfg.secret_env!);
  if (Buffer.byteLength(secret) < 32) throw new AuthConfigError('an HMAC secret must be at least 32 bytes');
  const sigHeader = cfg.header ?? 'X-Signature';
  const tsHeader = cfg.timestamp_header ?? 'X-Signature-Timestamp';
  const windowS = cfg.tolerance_seconds ?? 300;
  const refuse = (message: string, field: string) => new AppError('INVALID_CREDENTIALS', 401, message, { field });
  return {
    type: 'hmac',
    needsBody: true,
    check(req) {
      const sig = req.header(sigHeader.toLowerCase());
      const ts = req.header(tsHeader.toLowerCase());
      if (sig === '') return new AppError('AUTH_MISSING', 401, `The ${sigHeader} header is missing`, { field: sigHeader });
      if (ts === '') return new AppError('AUTH_MISSING', 401, `The ${tsHeader} header is missing`, { field: tsHeader });
      if (!TIMESTAMP.test(ts)) return refuse(`The ${tsHeader} header must be a Unix time in seconds`, tsHeader);
      if (Math.abs(req.now / 1000 - Number(ts)) > windowS) {
        return refuse(`The ${tsHeader} is more than ${windowS} seconds away from the server's clock; sign the request again`, tsHeader);
      }
      const given = HEX_SIGNATURE.exec(sig.trim())?.[1];
      if (!given) return refuse(`The ${sigHeader} header must be a hex HMAC-SHA256 digest`, sigHeader);
      const expected = Buffer.from(hmacSignature(secret, ts, req.rawBody ?? ''), 'hex');
      if (!timingSafeEqual(expected, Buffer.from(given, 'hex'))) {
        return refuse(`The ${sigHeader} does not match the body and timestamp`, sigHeader);
      }
      return null;
    },
  };
}
