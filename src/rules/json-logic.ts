// The one json-logic setup, done once per process: `method` (calls arbitrary methods on
// event data) and `log` (prints event data, PII included, to stdout) removed, the custom
// operations registered. Everything that evaluates rules imports from here. json-logic-js
// keeps one registry per process, while this module can be instantiated twice (imported
// as ESM and required through tsx's CommonJS hook, as plugin loading does in the delivery
// thread): the setup and the budget live on globalThis, so a second copy changes nothing.
import jsonLogic from 'json-logic-js';
import { CUSTOM_OPERATIONS } from './custom-ops.ts';

/** json-logic-js 2.x built-ins kept. `if`/`?:`, `and`, `or` and the array ops live in `apply` itself. */
export const BUILTIN_OPERATIONS = [
  'var', 'missing', 'missing_some',
  'if', '?:', '==', '===', '!=', '!==', '!', '!!', 'or', 'and',
  '>', '>=', '<', '<=', 'max', 'min', '+', '-', '*', '/', '%',
  'map', 'filter', 'reduce', 'all', 'none', 'some', 'merge', 'in',
  'cat', 'substr',
] as const;

/** Never available to rules, whatever json-logic-js version is installed. */
export const REMOVED_OPERATIONS = ['method', 'log'] as const;


/**
 * The evaluation budget of one expression: every operation evaluated is a step, and
 * `merge` and `cat` also pay for the elements and characters they build, so neither
 * nested loops over literal arrays nor a `reduce` that doubles its accumulator can stall
 * the event loop or fill the heap. Past it, evaluation stops with RuleBudgetError.
 */
export const EVALUATION_BUDGET = 200_000;

class BudgetError extends Error {
  override name = 'RuleBudgetError';
}

/** What every copy of this module shares: the budget of the evaluation running now. */
interface Shared {
  budget: { left: number } | null;
  /** The error class of the first copy, exported by every copy (so `instanceof` holds whichever catches). */
  BudgetError: typeof BudgetError;
}
const SHARED = Symbol.for('tracklane.json-logic');
const registry = globalThis as { [SHARED]?: Shared };
const shared: Shared = registry[SHARED] ?? install();

/** Thrown when an evaluation runs out of EVALUATION_BUDGET. */
export const RuleBudgetError = shared.BudgetError;
export type RuleBudgetError = BudgetError;

function install(): Shared {
  const state: Shared = { budget: null, BudgetError };
  registry[SHARED] = state;
  const spend = (n: number) => {
    if (state.budget !== null && (state.budget.left -= n) < 0) {
      throw new state.BudgetError(`evaluation exceeded its budget of ${EVALUATION_BUDGET} steps`);
    }
  };
  for (const name of REMOVED_OPERATIONS) jsonLogic.rm_operation(name);
  for (const [name, fn] of Object.entries(CUSTOM_OPERATIONS)) jsonLogic.add_operation(name, fn);
  // Every evaluation, including json-logic's own recursion (it calls jsonLogic.apply), passes here.
  const innerApply = jsonLogic.apply.bind(jsonLogic);
  jsonLogic.apply = ((logic: unknown, data: unknown) => {
    spend(1);
    const path = varPath(logic);
    if (path !== null) {
      spend(1); // as json-logic: one step for the operation, one for its argument
      return lookup(data, path);
    }
    return innerApply(logic as jsonLogic.RulesLogic<jsonLogic.AdditionalOperation>, data);
  }) as typeof jsonLogic.apply;
  jsonLogic.add_operation('merge', (...args: unknown[]) => {
    const out = args.reduce<unknown[]>((acc, a) => acc.concat(a), []);
    spend(out.length);
    return out;
  });
  jsonLogic.add_operation('cat', (...args: unknown[]) => {
    const out = args.join(''); // as json-logic's own cat: null and undefined become ''
    spend(Math.ceil(out.length / 16));
    return out;
  });
  return state;
}

/**
 * `{"var": "a.b.c"}`, the commonest expression in every rule, resolved without json-logic's
 * generic path (operator lookup, argument array, a split of the path on every call): the
 * path is split once per expression object and kept while the rule lives. Same answer as
 * json-logic's `var` for a non-empty string path without a default: each step indexes the
 * value so far, and null or undefined on the way gives null.
 */
const VAR_PATHS = new WeakMap<object, readonly string[] | null>();

function varPath(logic: unknown): readonly string[] | null {
  if (typeof logic !== 'object' || logic === null) return null;
  let path = VAR_PATHS.get(logic);
  if (path === undefined) {
    const v = (logic as { var?: unknown }).var;
    path = !Array.isArray(logic) && typeof v === 'string' && v !== '' && Object.keys(logic).length === 1 ? v.split('.') : null;
    VAR_PATHS.set(logic, path);
  }
  return path;
}

function lookup(data: unknown, path: readonly string[]): unknown {
  let value = data;
  for (const key of path) {
    if (value === null || value === undefined) return null;
    value = (value as Record<string, unknown>)[key];
    if (value === undefined) return null;
  }
  return value;
}

export const CUSTOM_OPERATION_NAMES: readonly string[] = Object.freeze(Object.keys(CUSTOM_OPERATIONS));

/** Every operation a rule may name; a rule file naming anything else is refused at load. */
export const OPERATIONS: ReadonlySet<string> = new Set<string>([...BUILTIN_OPERATIONS, ...CUSTOM_OPERATION_NAMES]);

/**
 * Operations whose later arguments are evaluated per element (the element is the data).
 * `reduce` sees `{current, accumulator}`.
 */
export const SCOPED_OPERATIONS: ReadonlySet<string> = new Set(['map', 'filter', 'reduce', 'all', 'none', 'some']);

/**
 * Evaluates `logic` against `data` within EVALUATION_BUDGET. Throws on an unknown operation
 * or a malformed rule, and RuleBudgetError when the budget runs out.
 */
export function evaluate(logic: unknown, data: unknown): unknown {
  const outer = shared.budget;
  shared.budget = { left: EVALUATION_BUDGET };
  try {
    return jsonLogic.apply(logic as jsonLogic.RulesLogic<jsonLogic.AdditionalOperation>, data);
  } finally {
    shared.budget = outer;
  }
}

/** json-logic truthiness: like JavaScript's, except that `[]` is false. */
export function truthy(value: unknown): boolean {
  return jsonLogic.truthy(value);
}
