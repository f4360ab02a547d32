// The one json-logic setup, done once per process: `method` (calls arbitrary methods on
// event data) and `log` (prints event data, PII included, to stdout) removed, the custom
// operations registered, and expressions compiled to closures once per rule object (see
// compile() below). Everything that evaluates rules imports from here. json-logic-js
// keeps one registry per process, while this module can be instantiated twice (imported
// as ESM and required through tsx's CommonJS hook, as plugin loading does in the delivery
// thread): the setup and the budget live on globalThis, so a second copy changes nothing.
import jsonLogic from 'json-logic-js';
import { CUSTOM_OPERATIONS } from './custom-ops.ts';
import {
  chargeText, createEvaluationBudget, MAX_VALUE_CHARS, spend, spendChars, enterBudget, leaveBudget, type EvaluationBudget,
} from './work-meter.ts';
import { boundedText } from './bounded-values.ts';

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


type Operation = (this: unknown, ...args: unknown[]) => unknown;
type Compiled = (data: unknown) => unknown;

export {
  EVALUATION_BUDGET, EVALUATION_DEADLINE_MS, MAX_VALUE_CHARS, createEvaluationBudget, RuleBudgetError, RuleValueTooLargeError,
  RuleInlineLimitError, type EvaluationBudget, type SharedSteps,
} from './work-meter.ts';

/** Whether this process's json-logic registry is set up (by whichever copy of this module came first). */
const SHARED = Symbol.for('tracklane.json-logic');
const registry = globalThis as { [SHARED]?: true };
if (registry[SHARED] !== true) install();

function install(): void {
  registry[SHARED] = true;
  for (const name of REMOVED_OPERATIONS) jsonLogic.rm_operation(name);
  /** The operations registered here (custom ones, merge and cat): compiled calls go to them directly. */
  const own = new Map<string, Operation>();
  const register = (name: string, fn: Operation) => {
    jsonLogic.add_operation(name, fn);
    own.set(name, fn);
  };
  for (const [name, fn] of Object.entries(CUSTOM_OPERATIONS)) register(name, fn);
  register('merge', (...args: unknown[]) => {
    const out = args.reduce<unknown[]>((acc, a) => acc.concat(a), []);
    spend(out.length);
    return out;
  });
  register('cat', (...args: unknown[]) => {
    // As json-logic's own cat (null and undefined become ''), built only within the cap.
    let out = '';
    for (const a of args) {
      if (a == null) continue;
      out += boundedText(a, MAX_VALUE_CHARS - out.length);
      if (out.length > MAX_VALUE_CHARS) break;
    }
    chargeText(out.length, 'cat\'s text');
    return out;
  });
  register('substr', (source: unknown, start: unknown, end: unknown) => {
    // As json-logic's own substr, on a text of at most the cap (charged for what it scans).
    const text = boundedText(source);
    chargeText(text.length, 'substr\'s text');
    if ((end as number) < 0) {
      const tail = text.substr(start as number);
      return tail.substr(0, tail.length + (end as number));
    }
    return text.substr(start as number, end as number);
  });
  // Every evaluation, including json-logic's own recursion (it calls jsonLogic.apply), passes here.
  const innerApply = jsonLogic.apply.bind(jsonLogic);
  const compiled = new WeakMap<object, Compiled>();
  const compiledOf = (logic: object): Compiled => {
    let f = compiled.get(logic);
    if (f === undefined) compiled.set(logic, (f = compile(logic)));
    return f;
  };
  const run = (logic: unknown, data: unknown): unknown => {
    if (typeof logic === 'object' && logic !== null) return compiledOf(logic)(data);
    spend(1);
    return logic;
  };
  /** An evaluator for one argument, compiled with its parent: a constant, or the compiled expression. */
  const part = (logic: unknown): Compiled => {
    if (typeof logic === 'object' && logic !== null) return compiledOf(logic);
    return () => {
      spend(1);
      return logic;
    };
  };

  /**
   * One expression as a closure, made once per (frozen) rule object. It does what
   * json-logic-js's apply does for it — the same order of evaluation, the same answer, one
   * budget step per apply it stands for — without apply's work on every call (the
   * operator found with Object.keys twice, the arguments wrapped and mapped into new
   * arrays). `var` with a path, `if`, `and`, `or`, `map`, `filter` and the operations
   * registered here are compiled; json-logic's other built-ins run through its own apply,
   * whose recursion comes back here for their arguments.
   */
  function compile(logic: object): Compiled {
    if (Array.isArray(logic)) {
      const items = logic.map(part);
      return (data) => {
        spend(1);
        const out = new Array<unknown>(items.length);
        for (let i = 0; i < items.length; i++) out[i] = items[i](data);
        return out;
      };
    }
    const keys = Object.keys(logic);
    if (keys.length !== 1) {
      return () => {
        spend(1);
        return logic; // not an operation: json-logic returns it as it is
      };
    }
    const op = keys[0];
    const raw = (logic as Record<string, unknown>)[op];
    if (op === 'var' && typeof raw === 'string' && raw !== '') {
      // `{"var": "a.b.c"}`, the commonest expression in every rule: the path split once.
      const path = raw.split('.');
      return (data) => {
        spend(2); // as json-logic: one step for the operation, one for its argument
        return lookup(data, path);
      };
    }
    const args = (Array.isArray(raw) ? raw : [raw]).map(part);
    const n = args.length;
    if (op === 'if' || op === '?:') {
      return (data) => {
        spend(1);
        let i = 0;
        for (; i < n - 1; i += 2) if (jsonLogic.truthy(args[i](data))) return args[i + 1](data);
        return n === i + 1 ? args[i](data) : null;
      };
    }
    if (op === 'and' || op === 'or') {
      const stopOn = op === 'or';
      return (data) => {
        spend(1);
        let current: unknown;
        for (let i = 0; i < n; i++) {
          current = args[i](data);
          if (jsonLogic.truthy(current) === stopOn) return current;
        }
        return current;
      };
    }
    if (op === 'map' || op === 'filter') {
      const list = args[0] ?? part(undefined);
      const each = args[1] ?? part(undefined);
      return op === 'map'
        ? (data) => {
          spend(1);
          const items = list(data);
          return Array.isArray(items) ? items.map((item) => each(item)) : [];
        }
        : (data) => {
          spend(1);
          const items = list(data);
          return Array.isArray(items) ? items.filter((item) => jsonLogic.truthy(each(item))) : [];
        };
    }
    const fn = own.get(op) ?? (Object.hasOwn(PLAIN_BUILTINS, op) ? PLAIN_BUILTINS[op] : undefined);
    if (fn !== undefined) {
      // Up to three arguments passed as they are: an array of values per call was most of
      // what evaluating a rule allocated besides its output.
      const [a, b, c] = args;
      if (n === 0) return (data) => (spend(1), fn.call(data));
      if (n === 1) return (data) => (spend(1), fn.call(data, a(data)));
      if (n === 2) return (data) => (spend(1), fn.call(data, a(data), b(data)));
      if (n === 3) return (data) => (spend(1), fn.call(data, a(data), b(data), c(data)));
      return (data) => {
        spend(1);
        const values = new Array<unknown>(n);
        for (let i = 0; i < n; i++) values[i] = args[i](data);
        return fn.apply(data, values);
      };
    }
    return (data) => {
      spend(1);
      return innerApply(logic as jsonLogic.RulesLogic<jsonLogic.AdditionalOperation>, data);
    };
  }
  jsonLogic.apply = run as typeof jsonLogic.apply;
}

/**
 * json-logic-js 2.x's own operations that only take their evaluated arguments, as it defines
 * them (so compiled calls skip its apply, which allocates the operator's keys twice and an
 * argument list per call). The differential test holds every shipped rule to its answers.
 */
const PLAIN_BUILTINS: Readonly<Record<string, Operation>> = {
  '==': (a, b) => a == b, // loose, as json-logic's
  '===': (a, b) => a === b,
  '!=': (a, b) => a != b,
  '!==': (a, b) => a !== b,
  '>': (a, b) => (a as number) > (b as number),
  '>=': (a, b) => (a as number) >= (b as number),
  '<': (a, b, c) => (c === undefined ? (a as number) < (b as number) : (a as number) < (b as number) && (b as number) < (c as number)),
  '<=': (a, b, c) => (c === undefined ? (a as number) <= (b as number) : (a as number) <= (b as number) && (b as number) <= (c as number)),
  '!!': (a) => jsonLogic.truthy(a),
  '!': (a) => !jsonLogic.truthy(a),
  '%': (a, b) => (a as number) % (b as number),
  '-': (a, b) => (b === undefined ? -(a as number) : (a as number) - (b as number)),
  '/': (a, b) => (a as number) / (b as number),
  '+': function plus() {
    let sum = 0;
    for (let i = 0; i < arguments.length; i++) sum = parseFloat(sum as unknown as string) + parseFloat(arguments[i]);
    return sum;
  },
  in: (a, b) => {
    if (!b || typeof (b as { indexOf?: unknown }).indexOf === 'undefined') return false;
    // A scan of the list or the text: charged by its elements or characters.
    if (typeof b === 'string') spendChars(b.length);
    else if (Array.isArray(b)) spend(b.length);
    return (b as { indexOf(x: unknown): number }).indexOf(a) !== -1;
  },
};

/**
 * json-logic's `var` for a non-empty string path without a default: each step indexes the
 * value so far, and null or undefined on the way gives null.
 */
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
 * Evaluates `logic` against `data`, spending `budget` (by default a fresh one of its own).
 * Throws on an unknown operation or a malformed rule, and RuleBudgetError when the budget
 * runs out (it stays spent: every later evaluate() with it throws at its first step).
 */
export function evaluate(logic: unknown, data: unknown, budget: EvaluationBudget = createEvaluationBudget()): unknown {
  const outer = enterBudget(budget);
  try {
    return jsonLogic.apply(logic as jsonLogic.RulesLogic<jsonLogic.AdditionalOperation>, data);
  } finally {
    leaveBudget(outer);
  }
}

/** json-logic truthiness: like JavaScript's, except that `[]` is false. */
export function truthy(value: unknown): boolean {
  return jsonLogic.truthy(value);
}
