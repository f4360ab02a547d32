// Coded errors. Handlers throw these; the one error funnel (http/error-funnel.ts)
// renders them in the body shape of the endpoint family. Only `expose` errors reach clients.

/** Every code a client can see, as docs/api.md lists them. */
export const ERROR_CODES = [
  'REQUIRED_FIELD_MISSING',
  'INVALID_TYPE',
  'INVALID_FORMAT',
  'INVALID_VALUE',
  'OUT_OF_RANGE',
  'INCONSISTENT_VALUE',
  'EVENT_NOT_APPROVED',
  'HASHED_VALUE_NOT_ALLOWED',
  'CUSTOM_VALIDATION_ERROR',
  'INVALID_JSON',
  'INVALID_BODY',
  'AUTH_MISSING',
  'INVALID_CREDENTIALS',
  'ACCESS_NOT_ENABLED',
  'PLAN_NOT_ELIGIBLE',
  'ENDPOINT_NOT_FOUND',
  'NOT_FOUND',
  'CONFLICT',
  'RULES_INVALID',
  'METHOD_NOT_ALLOWED',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'RATE_LIMITED',
  'UNAVAILABLE',
  'INTERNAL_ERROR',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The codes a validation issue may carry (a subset of ErrorCode). */
export type ValidationCode = Extract<
  ErrorCode,
  | 'REQUIRED_FIELD_MISSING'
  | 'INVALID_TYPE'
  | 'INVALID_FORMAT'
  | 'INVALID_VALUE'
  | 'OUT_OF_RANGE'
  | 'INCONSISTENT_VALUE'
  | 'EVENT_NOT_APPROVED'
  | 'HASHED_VALUE_NOT_ALLOWED'
  | 'CUSTOM_VALIDATION_ERROR'
  // Batch intake: one event of a batch broke endpoint 1's body limits.
  | 'INVALID_BODY'
  | 'PAYLOAD_TOO_LARGE'
>;

export interface AppErrorOptions {
  /** Seconds, for 429 and 503. */
  retryAfter?: number;
  /** The field a body error concerns, where there is one. */
  field?: string;
  /** Message safe for clients; defaults to true for 4xx, false for 5xx. */
  expose?: boolean;
  cause?: unknown;
  /** Machine-readable detail for the plain family (`error.details`), e.g. each rule error. */
  details?: unknown;
}

/** An error with a client-visible code and HTTP status. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryAfter?: number;
  readonly field?: string;
  readonly expose: boolean;
  readonly details?: unknown;

  constructor(code: ErrorCode, status: number, message: string, opts: AppErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = status;
    this.retryAfter = opts.retryAfter;
    this.field = opts.field;
    this.expose = opts.expose ?? status < 500;
    this.details = opts.details;
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;

/**
 * An error that knows its whole answer (a custom endpoint's validation refusal carries every
 * problem and what was expected, more than a code and a message). The one error funnel asks
 * it; a registered symbol, so a copy of the class from another module loader matches too.
 */
export const RENDER_ANSWER = Symbol.for('tracklane.renderAnswer');
export interface RefusalAnswer {
  status: number;
  code: ErrorCode;
  field?: string;
  body: unknown;
}
export interface SelfRenderingError {
  [RENDER_ANSWER](): RefusalAnswer;
}
export const rendersItself = (e: unknown): e is SelfRenderingError =>
  typeof e === 'object' && e !== null && typeof (e as Partial<SelfRenderingError>)[RENDER_ANSWER] === 'function';

/** The store could not answer (`what` it was asked to do): the client must retry later. */
export const unavailable = (cause?: unknown, what = 'store events'): AppError =>
  new AppError('UNAVAILABLE', 503, `The service cannot ${what} right now; retry later`, {
    retryAfter: 5,
    expose: true,
    cause,
  });
