// Body shapes of the endpoint families (see docs/api.md). Every response of a
// family is built here, success and error alike, so the shapes cannot drift apart.
import type { ErrorCode } from '../errors.ts';
import type { ResponseFamily } from './types.ts';

export const EMITTER = 'tracklane';
export const API_VERSION = 1;

/** 0 = accepted cleanly, 1 = accepted with warnings, 2 = failed. */
export type Level = 0 | 1 | 2;

export interface AckBody {
  emitter: string;
  detail: string;
  level: Level;
  version: number;
  errors?: string[];
  [extra: string]: unknown;
}

export const ack = (detail: string, level: Level, extra: Record<string, unknown> = {}): AckBody => ({
  emitter: EMITTER,
  detail,
  level,
  version: API_VERSION,
  ...extra,
});


/** The body of a refusal (any 4xx/5xx) in the family's shape. */
export function errorBody(family: ResponseFamily, code: ErrorCode, message: string, field?: string, details?: unknown): unknown {
  switch (family) {
    case 'ack':
      return ack('Request refused: see errors', 2, { errors: [`${code}: ${message}`] });
    case 'standard':
      return { status: 'error', message, errors: [{ field: field ?? '', code, message }] };
    case 'custom':
      return {
        result: 'error',
        messages: [message],
        error_code: code,
        error_context: { field: field ?? '', expected_format: '' },
      };
    case 'plain':
      return details === undefined ? { error: { code, message } } : { error: { code, message, details } };
  }
}
