// What rule evaluation is charged for, and the limits it runs under: a budget of steps per
// (event, destination), a wall-clock deadline for the same, and a cap on any one value a
// rule builds. A step is one operation evaluated, or the work an operation does beyond
// that: 16 characters it produces or scans, or one element or member it walks. Operations
// that build text (to_string, cat, lower, upper, substr) build it under the cap, so no
// rule can make a string larger than MAX_VALUE_CHARS however its accumulator grows
// (bounded-values.ts builds them).
//
// The state lives on globalThis: this module can be instantiated twice (imported as ESM and
// required through tsx's CommonJS hook, as plugin loading does in the delivery thread), and
// json-logic-js's registry, whose operations charge here, is one per process.

/** Steps one event's rules may spend per destination (their `when`s and outputs together). */
export const EVALUATION_BUDGET = 200_000;

/**
 * Wall-clock time one event's rules may take per destination, whatever the steps say: a
 * backstop for work no step counts (a comparison that turns an event array into text, a
 * number parsed from a long string), far above what any rule within the budget needs.
 */
export const EVALUATION_DEADLINE_MS = 250;

/** Characters of the largest text (or JSON text) any operation of a rule may build. */
export const MAX_VALUE_CHARS = 65_536;

/** Characters produced or scanned per step. */
export const CHARS_PER_STEP = 16;

/** How many steps pass between two looks at the clock. */
const CLOCK_EVERY = 2_048;

/**
 * Steps left of one (event, destination)'s budget; pass the same object to every evaluate()
 * it covers. `deadline` (performance.now() milliseconds) is optional: without it only steps count.
 */
export interface EvaluationBudget {
  left: number;
  deadline?: number;
  /** Steps until the clock is read again (kept by spend()). */
  clock?: number;
  /** Steps several budgets draw on together (one plan's destinations); past it, InlineLimitError. */
  shared?: SharedSteps;
}

/**
 * A limit on the steps of every budget made with it: what a caller planning on a thread that
 * must stay responsive (endpoint 2 on the HTTP thread) lets one event's rules spend there
 * before it plans the event elsewhere.
 */
export interface SharedSteps {
  left: number;
}

/** A fresh budget of EVALUATION_BUDGET steps and EVALUATION_DEADLINE_MS from now (drawing on `shared` too, when given). */
export const createEvaluationBudget = (shared?: SharedSteps): EvaluationBudget => ({
  left: EVALUATION_BUDGET, deadline: performance.now() + EVALUATION_DEADLINE_MS, clock: CLOCK_EVERY, shared,
});

class BudgetError extends Error {
  override name = 'RuleBudgetError';
}

/** The shared steps of a plan ran out: not the rules' fault, so not a rule failure; the caller plans the event elsewhere. */
class InlineLimitError extends Error {
  override name = 'InlineLimitError';
}

/** An operation would build a value past MAX_VALUE_CHARS: that expression fails (the rule gives no event). */
class ValueTooLargeError extends Error {
  override name = 'RuleValueTooLargeError';
}

interface Meter {
  /** The budget of the evaluation running now, or null (nothing is charged). */
  budget: EvaluationBudget | null;
  /** The classes of the first copy, exported by every copy (so `instanceof` holds whichever catches). */
  BudgetError: typeof BudgetError;
  ValueTooLargeError: typeof ValueTooLargeError;
  InlineLimitError: typeof InlineLimitError;
}
const KEY = Symbol.for('tracklane.rule-work-meter');
const registry = globalThis as { [KEY]?: Meter };
const meter: Meter = (registry[KEY] ??= { budget: null, BudgetError, ValueTooLargeError, InlineLimitError });

/** Thrown when an evaluation runs out of its budget or past its deadline. */
export const RuleBudgetError = meter.BudgetError;
export type RuleBudgetError = BudgetError;
export const RuleValueTooLargeError = meter.ValueTooLargeError;
export type RuleValueTooLargeError = ValueTooLargeError;
export const RuleInlineLimitError = meter.InlineLimitError;
export type RuleInlineLimitError = InlineLimitError;

/**
 * Starts charging `budget`; returns what was charged before, for leaveBudget() in a
 * `finally` (a pair of calls rather than a callback: evaluate() runs per rule and output key,
 * and a closure per call was a measurable share of what mapping allocates).
 */
export function enterBudget(budget: EvaluationBudget): EvaluationBudget | null {
  const outer = meter.budget;
  meter.budget = budget;
  return outer;
}

/** Goes back to charging `outer` (enterBudget's answer). */
export function leaveBudget(outer: EvaluationBudget | null): void {
  meter.budget = outer;
}

/** Charges `n` steps to the evaluation running now; throws RuleBudgetError past its budget or deadline. */
export function spend(n: number): void {
  const b = meter.budget;
  if (b === null) return;
  if (b.shared !== undefined && (b.shared.left -= n) < 0) throw new meter.InlineLimitError('this plan\'s shared steps ran out');
  if ((b.left -= n) < 0) {
    throw new meter.BudgetError(`evaluation exceeded the budget of ${EVALUATION_BUDGET} steps that one event's rules share per destination`);
  }
  if (b.deadline !== undefined && (b.clock = (b.clock ?? CLOCK_EVERY) - n) <= 0) {
    b.clock = CLOCK_EVERY;
    if (performance.now() > b.deadline) {
      b.left = -1; // spent: every later evaluate() with it stops at its first step
      throw new meter.BudgetError(`evaluation ran past the ${EVALUATION_DEADLINE_MS} ms that one event's rules have per destination`);
    }
  }
}

/** Charges for `chars` characters produced or scanned. */
export const spendChars = (chars: number): void => spend(Math.ceil(chars / CHARS_PER_STEP));

/** Fails the expression building `what`: it would pass MAX_VALUE_CHARS. */
export function tooLarge(what: string): never {
  throw new meter.ValueTooLargeError(`${what} would be longer than ${MAX_VALUE_CHARS.toLocaleString('en')} characters`);
}

/** Checks a text an operation built or is about to build, and charges for its characters. */
export function chargeText(length: number, what: string): void {
  spendChars(Math.min(length, MAX_VALUE_CHARS));
  if (length > MAX_VALUE_CHARS) tooLarge(what);
}
