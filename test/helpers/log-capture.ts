// A logger whose lines a test can read: the service's own logger (createLogger, with its
// redaction) writing parsed JSON lines into an array instead of stdout.
import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/logger.ts';

export interface CapturedLog {
  logger: Logger;
  /** Every line logged so far, parsed. */
  lines: Record<string, any>[];
}

export function captureLogger(level = 'info'): CapturedLog {
  const lines: Record<string, any>[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      cb();
    },
  });
  return { logger: createLogger(level, sink), lines };
}
