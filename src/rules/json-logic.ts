// The one json-logic setup, done once at module load: `method` (calls arbitrary methods
// on event data) and `log` (prints event data, PII included, to stdout) removed, the
// custom operations registered. Everything that evaluates rules imports from here.
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

for (const name of REMOVED_OPERATIONS) jsonLogic.rm_operation(name);
for (const [name, fn] of Object.entries(CUSTOM_OPERATIONS)) jsonLogic.add_operation(name, fn);

export const CUSTOM_OPERATION_NAMES: readonly string[] = Object.freeze(Object.keys(CUSTOM_OPERATIONS));

/** Every operation a rule may name; a rule file naming anything else is refused at load. */
export const OPERATIONS: ReadonlySet<string> = new Set<string>([...BUILTIN_OPERATIONS, ...CUSTOM_OPERATION_NAMES]);

/**
 * Operations whose later arguments are evaluated per element (the element is the data).
 * `reduce` sees `{current, accumulator}`.
 */
export const SCOPED_OPERATIONS: ReadonlySet<string> = new Set(['map', 'filter', 'reduce', 'all', 'none', 'some']);

/** Evaluates `logic` against `data`. Throws on an unknown operation or a malformed rule. */
export function evaluate(logic: unknown, data: unknown): unknown {
  return jsonLogic.apply(logic as jsonLogic.RulesLogic<jsonLogic.AdditionalOperation>, data);
}

/** json-logic truthiness: like JavaScript's, except that `[]` is false. */
export function truthy(value: unknown): boolean {
  return jsonLogic.truthy(value);
}
