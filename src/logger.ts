// The pino logger. Secrets and identifiers that could be PII are redacted by path,
// so a careless `log.info({ headers })` still prints nothing sensitive.
import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'req.headers["x-service-access-token"]',
  'req.headers.authorization',
  'headers["x-service-access-token"]',
  'headers.authorization',
  'token',
  'accessToken',
  'access_token',
  'secret',
  'api_secret',
  'config.access_token',
  'config.api_secret',
  'config.developer_token',
  'config.secret',
  'user.email',
  'user.phone',
  'email',
  'phone',
];

export function createLogger(level: string, dest?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'tracklane' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    dest,
  );
}
