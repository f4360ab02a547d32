// What every payload rule receives: the event name, the account's settings, and the two
// lists it appends findings to. Rules never throw and never stop at the first problem.
import type { ValidationCode } from '../../errors.ts';
import type { Issue, ValidationContext, WarningCode } from '../types.ts';

export interface RuleContext {
  /** event.name when it is a non-empty string. */
  readonly eventName: string | undefined;
  /** True for cart_viewed, which has its own reference. */
  readonly cart: boolean;
  readonly account: ValidationContext;
  readonly errors: Issue[];
  readonly warnings: Issue[];
}

export function fail(rc: RuleContext, field: string, code: ValidationCode, message: string): void {
  rc.errors.push({ field, code, message });
}

export function warn(rc: RuleContext, field: string, code: WarningCode, message: string): void {
  rc.warnings.push({ field, code, message });
}

/** Warns about members the payload examples show but never define; they pass through unchanged. */
export function warnUndefinedMembers(rc: RuleContext, o: Record<string, unknown>, path: string, members: readonly string[]): void {
  for (const m of members) {
    if (o[m] !== undefined) {
      warn(rc, `${path}.${m}`, 'UNDEFINED_FIELD',
        `${path}.${m} appears in the payload examples without a definition; it is passed through unchanged and no destination maps it by default`);
    }
  }
}
