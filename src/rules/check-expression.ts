// Static check of one json-logic expression at load time: every operator must be one we
// registered, literal objects must not hide operations, and the few arities json-logic
// would silently misread are enforced. Size limits keep a rule from being a weapon: at
// most RULE_LIMITS.depth levels of nesting (the walk stops there, so no depth can overflow
// the stack), RULE_LIMITS.nodes values per expression and RULE_LIMITS.literalArray
// elements per literal array. Evaluation never sees a rule that failed this.
import { dotPathProblem } from '../destinations/dot-path.ts';
import { childPointer } from './json-pointer.ts';
import { OPERATIONS, REMOVED_OPERATIONS } from './json-logic.ts';

export interface ExpressionProblem {
  /** JSON Pointer of the offending object inside the rule file. */
  path: string;
  message: string;
}

export const RULE_LIMITS = {
  /** Levels of nesting of one expression. */
  depth: 64,
  /** Values (operations, arrays, literals) in one expression. */
  nodes: 2_000,
  /** Elements of one literal array. */
  literalArray: 1_000,
} as const;

const ARITY: Readonly<Record<string, readonly [number, number]>> = {
  map: [2, 2], filter: [2, 2], all: [2, 2], none: [2, 2], some: [2, 2], reduce: [2, 3],
  if: [1, Infinity], '?:': [1, Infinity], substr: [2, 3], missing_some: [2, 2],
};

/**
 * Problems in `logic`, found at `pointer` (the JSON Pointer of `logic` in its file).
 * @example checkExpression({ sumitems: [] }, '/rules/2/output/params.value')
 * // → [{ path: '/rules/2/output/params.value', message: 'unknown operation "sumitems" (did you mean "sum_items"?)' }]
 */
export function checkExpression(logic: unknown, pointer: string): ExpressionProblem[] {
  const problems: ExpressionProblem[] = [];
  const state = { nodes: 0, tooBig: false };
  walk(logic, pointer, problems, 0, state);
  return problems;
}

interface WalkState {
  nodes: number;
  tooBig: boolean;
}

function walk(logic: unknown, pointer: string, problems: ExpressionProblem[], depth: number, state: WalkState): void {
  if (state.tooBig) return;
  if (++state.nodes > RULE_LIMITS.nodes) {
    state.tooBig = true;
    problems.push({ path: pointer, message: `RULE_TOO_LARGE: the expression has more than ${RULE_LIMITS.nodes} values; split it or simplify it` });
    return;
  }
  if (depth >= RULE_LIMITS.depth) {
    problems.push({ path: pointer, message: `RULE_TOO_DEEP: the expression is nested deeper than ${RULE_LIMITS.depth} levels` });
    return;
  }
  if (Array.isArray(logic)) {
    if (logic.length > RULE_LIMITS.literalArray) {
      problems.push({ path: pointer, message: `RULE_TOO_LARGE: a literal array of ${logic.length} elements (at most ${RULE_LIMITS.literalArray})` });
      return;
    }
    logic.forEach((item, i) => walk(item, childPointer(pointer, i), problems, depth + 1, state));
    return;
  }
  if (logic === null || typeof logic !== 'object') return;
  const keys = Object.keys(logic);
  if (keys.length === 0) return;
  if (keys.length > 1) {
    problems.push({
      path: pointer,
      message: `an object with ${keys.length} keys is not evaluated by json-logic; build objects with dot-path output keys or {"object": [key, value, …]}`,
    });
    return;
  }
  const op = keys[0];
  if ((REMOVED_OPERATIONS as readonly string[]).includes(op)) {
    problems.push({ path: pointer, message: `operation "${op}" is not allowed in rules` });
    return;
  }
  if (!OPERATIONS.has(op)) {
    const hint = closest(op);
    problems.push({ path: pointer, message: `unknown operation "${op}"${hint ? ` (did you mean "${hint}"?)` : ''}` });
    return;
  }
  const raw = (logic as Record<string, unknown>)[op];
  const args = Array.isArray(raw) ? raw : [raw];
  const argPointer = childPointer(pointer, op);
  const arity = ARITY[op];
  if (arity && (args.length < arity[0] || args.length > arity[1])) {
    const want = arity[0] === arity[1] ? `${arity[0]}` : arity[1] === Infinity ? `at least ${arity[0]}` : `${arity[0]} or ${arity[1]}`;
    problems.push({ path: argPointer, message: `"${op}" takes ${want} argument${want === '1' ? '' : 's'}, got ${args.length}` });
  }
  if (op === 'object') checkObjectPairs(args, argPointer, problems);
  walk(raw, argPointer, problems, depth + 1, state);
}

function checkObjectPairs(args: unknown[], pointer: string, problems: ExpressionProblem[]): void {
  if (args.length % 2 !== 0) {
    problems.push({ path: pointer, message: `"object" takes key/value pairs, got ${args.length} arguments` });
  }
  for (let i = 0; i < args.length; i += 2) {
    const key = args[i];
    if (typeof key === 'string') {
      const problem = dotPathProblem(key);
      if (problem !== null) problems.push({ path: childPointer(pointer, i), message: problem });
    } else if (key === null || typeof key !== 'object') {
      problems.push({ path: childPointer(pointer, i), message: `"object" keys must be strings` });
    }
  }
}

/** The registered operation nearest to a misspelt one (edit distance ≤ 2), if any. */
function closest(op: string): string | undefined {
  if (op.length < 4) return undefined;
  let best: string | undefined;
  let bestDistance = 3;
  for (const name of OPERATIONS) {
    if (name.length < 3) continue;
    const d = distance(op.toLowerCase(), name);
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  return best;
}

function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}
