// What rule evaluation is charged for, and the limits it runs under: a budget of steps per
// (event, destination), a wall-clock deadline for the same, and a cap on any one value a
// rule builds. A step is one operation evaluated, or the work an operation does beyond
// that: 16 characters it produces or scans, or one element or member it walks. Operations
// that build text (to_string, cat, lower, upper, substr) build it under the cap, so no
// rule can make a string larger than MAX_VALUE_CHARS however its accumulator grows.
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

function tooLarge(what: string): never {
  throw new meter.ValueTooLargeError(`${what} would be longer than ${MAX_VALUE_CHARS.toLocaleString('en')} characters`);
}

/** Checks a text an operation built or is about to build, and charges for its characters. */
export function chargeText(length: number, what: string): void {
  spendChars(Math.min(length, MAX_VALUE_CHARS));
  if (length > MAX_VALUE_CHARS) tooLarge(what);
}

/**
 * String(value) as json-logic's `cat` and `substr` make it (arrays joined with commas, null
 * and undefined inside them empty, objects `[object Object]`), built only while it stays
 * within `limit` characters: past it, RuleValueTooLargeError before the rest is walked.
 * Charges the elements walked; the caller charges for the text (chargeText), once.
 */
export function boundedText(value: unknown, limit: number = MAX_VALUE_CHARS): string {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) return String(value);
  // Most arrays are far from the cap: an upper bound on their text from one walk, then
  // the engine's own join. Only one that may pass the cap is built piece by piece.
  const estimate = textUpperBound(value, limit);
  if (estimate >= 0) return String(value);
  const join = (list: readonly unknown[], depth: number): string => {
    if (depth > 64) throw new Error('the value is nested too deeply');
    spend(list.length);
    let out = '';
    for (let i = 0; i < list.length; i++) {
      const v = list[i];
      out += `${i > 0 ? ',' : ''}${v == null ? '' : Array.isArray(v) ? join(v, depth + 1) : String(v)}`;
      if (out.length > limit) tooLarge('the text');
    }
    return out;
  };
  return join(value, 0);
}

/** Characters of a number or boolean as text, at most. */
const SCALAR_TEXT = 24;

/**
 * An upper bound on String(value)'s length for an array (charging one step per element
 * walked), or -1 once it passes `limit` (the text may still fit: build it exactly).
 */
function textUpperBound(list: readonly unknown[], limit: number, depth = 0): number {
  if (depth > 64) throw new Error('the value is nested too deeply');
  spend(list.length);
  let n = list.length;
  for (let i = 0; i < list.length && n <= limit; i++) {
    const v = list[i];
    if (typeof v === 'string') n += v.length;
    else if (Array.isArray(v)) {
      const inner = textUpperBound(v, limit - n, depth + 1);
      if (inner < 0) return -1;
      n += inner;
    } else n += SCALAR_TEXT;
  }
  return n <= limit ? n : -1;
}

/**
 * A bound on JSON.stringify(value)'s length before its strings are escaped (charging one
 * step per value walked), or -1 once it passes MAX_VALUE_CHARS.
 */
function jsonUpperBound(value: unknown): number {
  let n = 0;
  const walk = (v: unknown, depth: number): boolean => {
    if (depth > 64) throw new Error('to_string: the value is nested too deeply');
    if (typeof v === 'string') n += v.length + 2;
    else if (v === null || typeof v !== 'object') n += SCALAR_TEXT;
    else if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return false;
    else if (Array.isArray(v)) {
      spend(v.length);
      n += 1 + v.length;
      for (let i = 0; i < v.length; i++) if (n > MAX_VALUE_CHARS || !walk(v[i], depth + 1)) return false;
    } else {
      n += 1;
      for (const k in v) {
        if (!Object.hasOwn(v, k)) continue;
        spend(1);
        n += k.length + 4;
        if (n > MAX_VALUE_CHARS || !walk((v as Record<string, unknown>)[k], depth + 1)) return false;
      }
    }
    return n <= MAX_VALUE_CHARS;
  };
  return walk(value, 0) ? n : -1;
}

/**
 * JSON.stringify(value) for JSON data, built only while it stays within MAX_VALUE_CHARS:
 * past it, RuleValueTooLargeError before the rest is walked. Charges the characters built
 * and one step per value walked.
 */
export function boundedJson(value: unknown): string | undefined {
  // Most values are far from the cap: one walk bounds their text, then the engine's own
  // serialiser (escaping may lengthen it: checked after). Only a value that may pass the
  // cap is built piece by piece, and stopped there.
  if (jsonUpperBound(value) >= 0) {
    const out = JSON.stringify(value) as string | undefined;
    if (out !== undefined) chargeText(out.length, 'the JSON text');
    return out;
  }
  const parts: string[] = [];
  let length = 0;
  let nodes = 0;
  /** Past the cap: charge what was walked and built, then fail. */
  const over = (chars: number): never => {
    spend(nodes);
    chargeText(chars, 'the JSON text');
    return tooLarge('the JSON text');
  };
  const push = (s: string) => {
    length += s.length;
    if (length > MAX_VALUE_CHARS) over(length);
    parts.push(s);
  };
  const walk = (v: unknown, depth: number): boolean => {
    nodes++;
    if (depth > 64) throw new Error('to_string: the value is nested too deeply');
    if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
      v = (v as { toJSON(): unknown }).toJSON();
    }
    switch (typeof v) {
      case 'string':
        if (length + v.length + 2 > MAX_VALUE_CHARS) over(length + v.length + 2); // before escaping it
        push(JSON.stringify(v));
        return true;
      case 'number':
        push(Number.isFinite(v) ? String(v) : 'null');
        return true;
      case 'boolean':
        push(v ? 'true' : 'false');
        return true;
      case 'object':
        break;
      default:
        return false; // undefined, functions, symbols: left out (null in an array)
    }
    if (v === null) {
      push('null');
      return true;
    }
    if (Array.isArray(v)) {
      push('[');
      for (let i = 0; i < v.length; i++) {
        if (i > 0) push(',');
        if (!walk(v[i], depth + 1)) push('null');
      }
      push(']');
      return true;
    }
    push('{');
    let first = true;
    for (const key in v) {
      if (!Object.hasOwn(v, key)) continue;
      const mark = parts.length;
      const before = length;
      push(`${first ? '' : ','}${JSON.stringify(key)}:`);
      if (walk((v as Record<string, unknown>)[key], depth + 1)) {
        first = false;
      } else {
        parts.length = mark;
        length = before;
      }
    }
    push('}');
    return true;
  };
  if (!walk(value, 0)) return undefined;
  spend(nodes);
  chargeText(length, 'the JSON text');
  return parts.join('');
}

/**
 * Whether `value`'s JSON text stays within `limit` characters (escapes not counted), walking
 * no further than that: what a native event's size is checked with.
 */
export function jsonFitsWithin(value: unknown, limit: number): boolean {
  return jsonLengthWithin(value, 0, limit, 0) >= 0;
}

/** `length` plus the JSON length of `v`, or -1 once past `limit` (a plain recursive function: no closure per call). */
function jsonLengthWithin(v: unknown, length: number, limit: number, depth: number): number {
  if (depth > 64) return -1;
  if (typeof v === 'string') length += v.length + 2;
  else if (v === null || typeof v !== 'object') length += 8;
  else if (Array.isArray(v)) {
    length += 1 + v.length;
    for (let i = 0; i < v.length && length >= 0 && length <= limit; i++) length = jsonLengthWithin(v[i], length, limit, depth + 1);
  } else {
    length += 1;
    for (const k in v) {
      if (!Object.hasOwn(v, k)) continue;
      length = jsonLengthWithin((v as Record<string, unknown>)[k], length + k.length + 4, limit, depth + 1);
      if (length < 0 || length > limit) return -1;
    }
  }
  return length >= 0 && length <= limit ? length : -1;
}
