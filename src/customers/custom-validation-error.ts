// The one refusal a custom endpoint owns: 400 CUSTOM_VALIDATION_ERROR with the field and,
// in words, what was expected there. Thrown by the body check and by handlers for rules a
// schema cannot express (a status change for an order the same batch cancels, say).
import { RENDER_ANSWER, type RefusalAnswer } from '../errors.ts';
import { errorBody } from '../http/responses.ts';
import type { BodyProblem } from './body-validator.ts';

/**
 * Handlers are imported at run time and may reach this module through another loader (a
 * test runner's CommonJS hook, say), so instanceof can fail across the two copies; a
 * registered symbol marks instances of every copy alike.
 */
const BRAND = Symbol.for('tracklane.CustomValidationError');

export class CustomValidationError extends Error {
  override name = 'CustomValidationError';
  readonly [BRAND] = true;
  /** The first problem is the one error_context names; every problem becomes a message. */
  constructor(readonly problems: readonly BodyProblem[]) {
    super(problems[0]?.message ?? 'The request body is not valid');
  }

  /** The custom family's 400: every problem a message, the first one's field and expected format. */
  [RENDER_ANSWER](): RefusalAnswer {
    const first = this.problems[0];
    const body = errorBody('custom', 'CUSTOM_VALIDATION_ERROR', this.message, first?.field) as {
      messages: string[];
      error_context: { field: string; expected_format: string };
    };
    body.messages = this.problems.map((p) => p.message);
    body.error_context.expected_format = first?.expected_format ?? '';
    return { status: 400, code: 'CUSTOM_VALIDATION_ERROR', field: first?.field, body };
  }
}

/**
 * For handlers: refuse the request with a 400 naming `field`.
 * @example throw customValidationError('orders[2].status', 'one of "paid", "shipped"', 'orders[2].status cannot go back to pending');
 */
export function customValidationError(field: string, expectedFormat: string, message: string): CustomValidationError {
  return new CustomValidationError([{ field, expected_format: expectedFormat, message }]);
}

export const isCustomValidationError = (e: unknown): e is CustomValidationError =>
  e instanceof Error && (e as unknown as Record<symbol, unknown>)[BRAND] === true && Array.isArray((e as CustomValidationError).problems);
