// A worst-case bound on the evaluation steps one event costs a rule file, computed from its
// expressions alone, so that a file whose rules together would run past the budget they
// share per (event, destination) is refused when it is checked (rules check, publish,
// import, load), not discovered on every event. The rules are in src/rules/README.md.
import { CHARS_PER_STEP, EVALUATION_BUDGET, MAX_VALUE_CHARS } from './work-meter.ts';
import { childPointer } from './json-pointer.ts';
import type { RuleSpec } from './types.ts';

/**
 * What the bound assumes of the event data, where an expression's cost depends on it: an
 * array read from the event has at most `arrayElements` elements and a value read from it,
 * as text, at most `textChars` characters. Literal arrays count with their real length,
 * and what expressions build (map, merge, cat, a reduce's accumulator) is followed through.
 */
export const COST_ASSUMPTIONS = { arrayElements: 100, textChars: 2_000 } as const;

/**
 * Upper bounds on a value: `e` elements (when it is an array), `c` characters of its text
 * (String(value), what `cat` pays for), and `ie`/`ic` the same for anything nested in it.
 */
interface Size {
  e: number;
  c: number;
  ie: number;
  ic: number;
}

interface Bound {
  steps: number;
  size: Size;
}

/** What `var` reads: the rule data (or the element of map/filter/all/some/none), or a reduce's {current, accumulator}. */
type Scope = { kind: 'data'; data: Size } | { kind: 'reduce'; current: Size; accumulator: Size };

const DATA: Size = { e: COST_ASSUMPTIONS.arrayElements, c: COST_ASSUMPTIONS.textChars, ie: COST_ASSUMPTIONS.arrayElements, ic: COST_ASSUMPTIONS.textChars };
const SCALAR: Size = { e: 0, c: 24, ie: 0, ic: 0 };
/** `[object Object]`, with nothing known inside. */
const OBJECT_TEXT = 15;
/** The abstract walk of one file stops after this many visits: past it the file counts as unbounded. */
const MAX_VISITS = 2_000_000;

const text = (c: number): Size => ({ e: 0, c, ie: 0, ic: 0 });
const mul = (a: number, b: number): number => (a === 0 || b === 0 ? 0 : a * b);
const join = (a: Size, b: Size): Size => ({ e: Math.max(a.e, b.e), c: Math.max(a.c, b.c), ie: Math.max(a.ie, b.ie), ic: Math.max(a.ic, b.ic) });
const joinAll = (sizes: readonly Size[], start: Size = { e: 0, c: 0, ie: 0, ic: 0 }): Size => sizes.reduce(join, start);
/** Any element or member of a value. */
const inner = (s: Size): Size => ({ e: s.ie, c: s.ic, ie: s.ie, ic: s.ic });
/** A value whose elements may be any of `parts`. */
const holding = (parts: readonly Size[]): Pick<Size, 'ie' | 'ic'> => ({
  ie: Math.max(0, ...parts.map((p) => Math.max(p.e, p.ie))), ic: Math.max(0, ...parts.map((p) => Math.max(p.c, p.ic))),
});
/** Steps for `c` characters produced or scanned. */
const chars = (c: number): number => Math.ceil(Math.min(c, MAX_VALUE_CHARS + 1) / CHARS_PER_STEP);
/** A text an operation builds: never past the cap (the operation fails there). */
const built = (c: number): Size => text(Math.min(c, MAX_VALUE_CHARS));
/**
 * Elements walked turning a value into text (String(array) joins every nested element): at
 * most every element and nested element, and never more than two per character of the text
 * plus the nesting (each element but the first of a list adds a comma).
 */
const textWalk = (s: Size): number => (s.e === 0 ? 0 : Math.min(s.e + mul(s.e, s.ie), 2 * s.c + 64));
const same = (a: Size, b: Size): boolean => a.e === b.e && a.c === b.c && a.ie === b.ie && a.ic === b.ic;

const SCALAR_OPS = new Set([
  '==', '===', '!=', '!==', '!', '!!', '>', '>=', '<', '<=', 'max', 'min', '+', '-', '*', '/', '%', 'in',
  'sum_items', 'sum', 'count', 'ms_to_us', 'ms_to_s', 'round', 'to_number', 'all', 'none', 'some',
]);

/** One walk over a file's expressions, counting visits so that no file can make the walk itself costly. */
function createWalker() {
  let visits = 0;

  function walk(logic: unknown, scope: Scope): Bound {
    if (++visits > MAX_VISITS) return { steps: Infinity, size: DATA };
    if (Array.isArray(logic)) {
      const items = logic.map((l) => walk(l, scope));
      const c = items.reduce((n, i) => n + i.size.c, Math.max(0, items.length - 1));
      return { steps: 1 + sum(items), size: { e: items.length, c, ...holding(items.map((i) => i.size)) } };
    }
    if (logic === null || typeof logic !== 'object') return { steps: 1, size: text(String(logic).length) };
    const keys = Object.keys(logic);
    if (keys.length !== 1) return { steps: 1, size: text(OBJECT_TEXT) };
    const op = keys[0];
    const raw = (logic as Record<string, unknown>)[op];
    if (op === 'var' && typeof raw === 'string' && raw !== '') return { steps: 2, size: readVar(raw, scope) };
    const args = Array.isArray(raw) ? raw : [raw];
    switch (op) {
      case 'map': case 'filter': case 'all': case 'none': case 'some': return iterate(op, args, scope);
      case 'reduce': return reduce(args, scope);
      default: return operation(op, args, scope);
    }
  }

  /** map, filter, all, none, some: the list once, the body once per element. */
  function iterate(op: string, args: unknown[], scope: Scope): Bound {
    const list = walk(args[0], scope);
    const body = walk(args[1], { kind: 'data', data: inner(list.size) });
    const steps = 1 + list.steps + mul(list.size.e, body.steps);
    if (op === 'filter') return { steps, size: list.size };
    if (op !== 'map') return { steps, size: SCALAR };
    const e = list.size.e;
    return { steps, size: { e, c: mul(e, body.size.c + 1), ...holding([body.size]) } };
  }

  /** reduce: the body per element, its accumulator followed until it stops growing (or the bound passes the budget). */
  function reduce(args: unknown[], scope: Scope): Bound {
    const list = walk(args[0], scope);
    const initial = args.length > 2 ? walk(args[2], scope) : { steps: 0, size: SCALAR };
    let steps = 1 + list.steps + initial.steps;
    let accumulator = initial.size;
    const current = inner(list.size);
    for (let i = 0; i < list.size.e; i++) {
      const body = walk(args[1], { kind: 'reduce', current, accumulator });
      steps += body.steps;
      const next = join(accumulator, body.size);
      if (same(next, accumulator)) {
        steps += mul(body.steps, list.size.e - i - 1);
        break;
      }
      accumulator = next;
      if (!(steps <= EVALUATION_BUDGET)) return { steps, size: accumulator };
    }
    return { steps, size: accumulator };
  }

  /** Every other operation evaluates each argument once (if/and/or at most once), then pays for what it builds. */
  function operation(op: string, args: unknown[], scope: Scope): Bound {
    const parts = args.map((a) => walk(a, scope));
    const sizes = parts.map((p) => p.size);
    const steps = 1 + sum(parts);
    switch (op) {
      case 'var': {
        const path = args[0];
        const read = typeof path === 'string' || typeof path === 'number' ? readVar(String(path), scope) : readAny(scope);
        return { steps, size: args.length > 1 ? join(read, sizes[1]) : read };
      }
      case 'if': case '?:': case 'and': case 'or': case 'first': return { steps, size: joinAll(sizes) };
      case 'merge': {
        const e = sizes.reduce((n, s) => n + Math.max(s.e, 1), 0);
        return { steps: steps + e, size: { e, c: sizes.reduce((n, s) => n + s.c, e), ...holding(sizes) } };
      }
      case 'cat': {
        const c = sizes.reduce((n, s) => n + s.c, 0);
        return { steps: steps + chars(c) + sizes.reduce((n, s) => n + textWalk(s), 0), size: built(c) };
      }
      case 'missing': case 'missing_some': {
        // Each name is looked up as a {"var": name} (2 steps); missing_some also evaluates {"missing": names}.
        const names = Math.max(op === 'missing' ? args.length : 0, sizes[op === 'missing' ? 0 : 1]?.e ?? 0);
        const extra = op === 'missing' ? 2 * names : 2 + 3 * names;
        return { steps: steps + extra, size: { e: names, c: mul(names, COST_ASSUMPTIONS.textChars + 1), ie: 0, ic: COST_ASSUMPTIONS.textChars } };
      }
      case 'substr': case 'lower': case 'upper': {
        const source = sizes[0] ?? SCALAR;
        return { steps: steps + chars(source.c) + (op === 'substr' ? textWalk(source) : 0), size: built(source.c) };
      }
      // An object's `e` counts its members (what omit and cookie walk).
      case 'object': return { steps, size: { e: Math.floor(args.length / 2), c: OBJECT_TEXT, ...holding(sizes.filter((_, i) => i % 2 === 1)) } };
      case 'pick': {
        const keys = args.length - 1 + sizes.slice(1).reduce((n, s) => n + s.e, 0);
        return { steps: steps + keys, size: { e: keys, c: OBJECT_TEXT, ...holding(sizes[0] ? [inner(sizes[0])] : []) } };
      }
      case 'omit': {
        const source = sizes[0] ?? SCALAR;
        const keys = args.length - 1 + sizes.slice(1).reduce((n, s) => n + s.e, 0);
        return { steps: steps + source.e + keys, size: { e: source.e, c: OBJECT_TEXT, ...holding([inner(source)]) } };
      }
      case 'cookie': return { steps: steps + (args.length > 1 ? sizes[1].e : COST_ASSUMPTIONS.arrayElements), size: text(COST_ASSUMPTIONS.textChars) };
      case 'in': return { steps: steps + (sizes[1] ? sizes[1].e + chars(sizes[1].c) : 0), size: SCALAR };
      case 'sum': case 'sum_items': return { steps: steps + (sizes[0]?.e ?? 0), size: SCALAR };
      case 'iso_datetime': return { steps, size: text(32) };
      // JSON of anything: at most six characters (\uXXXX) per character of its parts, one
      // step per 16 of them and one per value walked (at most one per two characters).
      case 'to_string': {
        const c = Math.min(MAX_VALUE_CHARS + 1, 6 * Math.max(COST_ASSUMPTIONS.textChars, ...sizes.map((s) => Math.max(s.c, s.ic))));
        return { steps: steps + chars(c) + Math.ceil(c / 2) + 1, size: built(c) };
      }
      default:
        return { steps, size: SCALAR_OPS.has(op) ? SCALAR : joinAll(sizes, DATA) };
    }
  }

  return walk;
}

/** What `{"var": path}` reads in `scope`. */
function readVar(path: string, scope: Scope): Size {
  if (scope.kind === 'data') return path === '' ? scope.data : inner(scope.data);
  const [head, ...rest] = path.split('.');
  const whole = head === 'current' ? scope.current : head === 'accumulator' ? scope.accumulator : null;
  if (whole === null) return path === '' ? { e: 0, c: OBJECT_TEXT, ...holding([scope.current, scope.accumulator]) } : SCALAR;
  return rest.length === 0 ? whole : inner(whole);
}

/** A `var` whose path is computed: anything the scope holds. */
function readAny(scope: Scope): Size {
  if (scope.kind === 'data') return join(scope.data, inner(scope.data));
  return joinAll([scope.current, scope.accumulator, inner(scope.current), inner(scope.accumulator)]);
}

const sum = (bounds: readonly Bound[]): number => bounds.reduce((n, b) => n + b.steps, 0);

/** A rule's bound: its `when` and every output key, as applyRules evaluates them. */
export function ruleStepBound(rule: RuleSpec, walk: ReturnType<typeof createWalker> = createWalker()): number {
  const top: Scope = { kind: 'data', data: DATA };
  let steps = rule.when === undefined ? 0 : walk(rule.when, top).steps;
  for (const expr of Object.values(rule.output ?? {})) steps += walk(expr, top).steps;
  return steps;
}

export interface CostProblem {
  path: string;
  message: string;
}

/**
 * The rules of one file that can run for one event: those naming the event plus those for
 * `*`, for the event name that costs most. Over EVALUATION_BUDGET, one problem naming that
 * event and the costliest of its rules.
 * @example ruleFileCostProblems(file.rules)
 * // → [{ path: '/rules/3', message: 'RULE_COST_TOO_HIGH: one "purchase" event may cost these rules up to 880,000 evaluation steps, …' }]
 */
export function ruleFileCostProblems(rules: readonly RuleSpec[]): CostProblem[] {
  const walk = createWalker();
  const star: number[] = [];
  const byName = new Map<string, number[]>();
  const bounds = rules.map((rule, i) => {
    if (rule.disabled === true) return 0;
    const steps = ruleStepBound(rule, walk);
    const names = typeof rule.event === 'string' ? [rule.event] : rule.event;
    if (names.includes('*')) star.push(i);
    else for (const name of names) byName.set(name, [...(byName.get(name) ?? []), i]);
    return steps;
  });
  const total = (ids: readonly number[]) => ids.reduce((n, i) => n + bounds[i], 0);
  let worst = { name: '*', ids: star, steps: total(star) };
  for (const [name, ids] of byName) {
    const steps = total(ids) + total(star);
    if (!(steps <= worst.steps)) worst = { name, ids: [...ids, ...star], steps };
  }
  if (worst.steps <= EVALUATION_BUDGET) return [];
  // The first of the costliest, in file order.
  const costliest = [...worst.ids].sort((a, b) => a - b).reduce((a, b) => (bounds[b] > bounds[a] ? b : a));
  const event = worst.name === '*' ? 'any' : `one "${worst.name}"`;
  return [{
    path: childPointer('/rules', costliest),
    message: `RULE_COST_TOO_HIGH: ${event} event may cost ${worst.ids.length === 1 ? 'this rule' : `these ${worst.ids.length} rules`} ` +
      `${stepText(worst.steps)} evaluation steps, more than the ${EVALUATION_BUDGET.toLocaleString('en')} one event's rules share per destination ` +
      `(counting up to ${COST_ASSUMPTIONS.arrayElements} elements per array and ${COST_ASSUMPTIONS.textChars.toLocaleString('en')} characters per text ` +
      `read from the event); the costliest is this rule, ${stepText(bounds[costliest])}: simplify it or drop rules`,
  }];
}

const stepText = (n: number): string => (Number.isFinite(n) && n < 1e15 ? `up to ${Math.ceil(n).toLocaleString('en')}` : 'an unbounded number of');
