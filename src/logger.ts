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
  'config.client_secret',
  'config.refresh_token',
  'client_secret',
  'refresh_token',
  'config.secret',
  'user.email',
  'user.phone',
  'email',
  'phone',
];

/** Log output is written once this many bytes are pending, or LOG_FLUSH_MS after the first. */
export const LOG_BUFFER_BYTES = 4096;
export const LOG_FLUSH_MS = 100;

/**
 * The server process's stdout for the logger, buffered: lines go out in writes of about
 * LOG_BUFFER_BYTES, and at the latest LOG_FLUSH_MS after they were logged, instead of one
 * write(2) per line (the access log has a line per request: 5 % of the HTTP thread under
 * load with a write each). The flush timer runs only while lines wait (sonic-boom's
 * `periodicFlush` would wake the thread every LOG_FLUSH_MS for ever, idle or not). pino
 * writes what is pending when the process exits, on an error exit too; only a kill -9 can
 * lose the last tenth of a second of log lines.
 */
export function serverLogDestination(): DestinationStream {
  return flushAfter(pino.destination({ dest: 1, sync: false, minLength: LOG_BUFFER_BYTES }), LOG_FLUSH_MS);
}

/** What flushAfter needs of a buffered destination (a sonic-boom). */
interface Buffered {
  write(line: string): boolean;
  flush(cb?: (err?: Error) => void): void;
  flushSync(): void;
  /** Ended (pino ends it at exit): nothing more is flushed. */
  readonly destroyed?: boolean;
}

/** `out`, flushed `ms` after the first line written since its last flush; no timer while nothing waits. */
export function flushAfter(out: Buffered, ms: number): DestinationStream & Omit<Buffered, 'write'> {
  let timer: NodeJS.Timeout | undefined;
  const flushNow = () => {
    timer = undefined;
    if (!out.destroyed) out.flush();
  };
  return {
    write(line: string) {
      out.write(line);
      timer ??= setTimeout(flushNow, ms).unref();
    },
    flush(cb) {
      out.flush(cb);
    },
    flushSync() {
      out.flushSync();
    },
  };
}

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
