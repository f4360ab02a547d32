// Runs a destination's rules over one event's RuleData (pure). A rule that fails to
// evaluate produces no event and a warning; it never takes the other rules down with it.
// All of them share one evaluation budget: once it is spent, no further rule runs.
import { isAbsent } from './custom-ops.ts';
import { isPlainObject, setPath } from '../destinations/dot-path.ts';
import {
  createEvaluationBudget, evaluate, RuleBudgetError, RuleInlineLimitError, truthy, type EvaluationBudget, type SharedSteps,
} from './json-logic.ts';
import { jsonFitsWithin } from './bounded-values.ts';

/**
 * Characters of JSON text one native event may take (escapes not counted): a rule whose
 * output is larger gives no event and a warning, so no rule can hand a destination (or a
 * preview) an event no platform would take.
 */
export const MAX_NATIVE_EVENT_CHARS = 1_048_576;
import type { NativeEvent, RuleData, RuleSpec } from './types.ts';

export interface ApplyRulesResult {
  /** One per matching rule, in rule order. */
  events: NativeEvent[];
  /** For the rule author: which rule failed and why. Never quotes event data. */
  warnings: string[];
  /** Ids of the enabled rules for this event name, whether or not their `when` held. */
  considered: string[];
  /**
   * The id of the rule that was running when the budget of this call (EVALUATION_BUDGET,
   * shared by every rule) ran out, or empty. When set, later rules were not evaluated and
   * `events` is incomplete: the caller sends nothing (`rule_budget_exceeded`).
   */
  overBudget: string[];
}

/** Whether `rule` is for events named `name` (`*` matches any). */
export function ruleMatchesEvent(rule: RuleSpec, name: string): boolean {
  const names = rule.event;
  if (typeof names === 'string') return names === name || names === '*';
  return names.includes(name) || names.includes('*');
}

/** A rule's output as [key, expression] pairs, listed once per output object (rules are read-only once loaded). */
const OUTPUT_ENTRIES = new WeakMap<object, [string, unknown][]>();
function outputEntries(output: RuleSpec['output']): [string, unknown][] {
  let entries = OUTPUT_ENTRIES.get(output);
  if (entries === undefined) OUTPUT_ENTRIES.set(output, (entries = Object.entries(output)));
  return entries;
}

/**
 * @example
 * applyRules([{ id: 'ga4.purchase', event: 'checkout_completed',
 *               output: { name: 'purchase', 'params.value': { var: 'event.value' } } }], data)
 * // → { events: [{ ruleId: 'ga4.purchase', fields: { name: 'purchase', params: { value: 99.5 } } }], warnings: [],
 * //     considered: ['ga4.purchase'], overBudget: [] }
 * @throws RuleInlineLimitError when `shared` (steps the caller's plan draws on) runs out.
 */
export function applyRules(rules: readonly RuleSpec[], data: RuleData, shared?: SharedSteps): ApplyRulesResult {
  // Most calls list one rule and one event, and no warning: lists are made on their first
  // member, at that size (an empty list's first push reserves room for 17).
  let events: NativeEvent[] = NONE;
  const warnings: string[] = [];
  let considered: string[] = NONE;
  const overBudget: string[] = [];
  const name = typeof data.event.name === 'string' ? data.event.name : '';
  const budget = createEvaluationBudget(shared);
  // Indexed loops here and in buildOutput: with a try/catch in the body, for…of left an
  // iterator result allocated per rule and per output key (seen in allocation profiles).
  for (let r = 0; r < rules.length; r++) {
    const rule = rules[r];
    if (rule.disabled === true || !ruleMatchesEvent(rule, name)) continue;
    considered = append(considered, rule.id);
    if (rule.when !== undefined) {
      let applies: boolean;
      try {
        applies = truthy(evaluate(rule.when, data, budget));
      } catch (err) {
        if (err instanceof RuleInlineLimitError) throw err; // the caller plans elsewhere
        warnings.push(`rule ${rule.id}: "when" failed (${messageOf(err)}); rule skipped`);
        if (err instanceof RuleBudgetError) {
          overBudget.push(rule.id);
          break;
        }
        continue;
      }
      if (!applies) continue;
    }
    const fields = buildOutput(rule, data, warnings, overBudget, budget);
    if (overBudget.length > 0) break;
    if (fields === null) continue;
    if (!jsonFitsWithin(fields, MAX_NATIVE_EVENT_CHARS)) {
      warnings.push(`rule ${rule.id}: its native event is larger than ${MAX_NATIVE_EVENT_CHARS / 1_048_576} MiB as JSON; no event from this rule`);
      continue;
    }
    events = append<NativeEvent>(events, { ruleId: rule.id, fields });
  }
  return { events, warnings, considered, overBudget };
}

/** Shared by every result that has no member in a list (results are only read). */
const NONE: never[] = Object.freeze([]) as unknown as never[];

function append<T>(list: T[], item: T): T[] {
  if (list === NONE) return [item];
  list.push(item);
  return list;
}

function buildOutput(rule: RuleSpec, data: RuleData, warnings: string[], overBudget: string[], budget: EvaluationBudget): Record<string, unknown> | null {
  const fields: Record<string, unknown> = {};
  const entries = outputEntries(rule.output);
  for (let i = 0; i < entries.length; i++) {
    const [key, expr] = entries[i];
    let value: unknown;
    try {
      const raw = evaluate(expr, data, budget);
      if (typeof raw === 'number' && !Number.isFinite(raw)) {
        warnings.push(`rule ${rule.id}: output "${key}" is not a finite number; left out`);
        continue;
      }
      value = isJsonData(raw, 0) ? raw : toJsonData(raw, 0);
      if (isAbsent(value)) continue;
      setPath(fields, key, value, 'strict');
    } catch (err) {
      if (err instanceof RuleInlineLimitError) throw err; // the caller plans elsewhere
      if (err instanceof RuleBudgetError) overBudget.push(rule.id);
      warnings.push(`rule ${rule.id}: output "${key}" failed (${messageOf(err)}); no event from this rule`);
      return null;
    }
  }
  return fields;
}

const MAX_DEPTH = 32;

/**
 * Whether `v` already is what toJsonData would make of it, so it can be used as it is: rule
 * data is read-only (plugins build their bodies from it without writing to it, see
 * test/pipeline/read-only-inputs.test.ts), so a native event may share it instead of a copy.
 */
function isJsonData(v: unknown, depth: number): boolean {
  if (depth > MAX_DEPTH) return false;
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (v[i] === undefined || !isJsonData(v[i], depth + 1)) return false;
    return true;
  }
  if (!isPlainObject(v)) return false;
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    const x = v[k];
    if (x === undefined || !isJsonData(x, depth + 1)) return false;
  }
  return true;
}

/**
 * A copy made of JSON data only, for a value that is not (isJsonData). Undefined members
 * are dropped and non-finite numbers become null, as JSON.stringify would.
 */
function toJsonData(v: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new Error(`value nested deeper than ${MAX_DEPTH} levels`);
  if (v === null || v === undefined || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (Array.isArray(v)) return v.map((x) => toJsonData(x, depth + 1) ?? null);
  if (isPlainObject(v)) {
    const out: Record<string, unknown> = {};
    // for…in over own keys: Object.entries would allocate an array of pairs per object.
    for (const k in v) {
      if (!Object.hasOwn(v, k)) continue;
      const copy = toJsonData(v[k], depth + 1);
      if (copy !== undefined) out[k] = copy;
    }
    return out;
  }
  throw new Error(`the value is a ${typeof v}, not JSON data`);
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
