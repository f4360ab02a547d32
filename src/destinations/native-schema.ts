// Checks what a destination's rules produced against the plugin's own JSON Schema of one
// native event (`nativeSchema`), before anything is built or sent: a mapping mistake is
// then refused with the rule and the JSON path, never posted for the platform to reject.
// Draft-07 schemas compile on the service's draft-07 instance, 2020-12 ones on the payload
// instance (one Ajv instance per draft); each schema is compiled once.
import type { ErrorObject, ValidateFunction } from 'ajv';
import { compilePayloadSchema } from '../schema/ajv.ts';
import { compileDraft07Schema } from '../schema/ajv-draft07.ts';
import { asExpanded, expandDotPaths } from './dot-path.ts';

const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';
const compiled = new WeakMap<object, ValidateFunction>();

/** The validator of a native schema, compiled on first use. @throws when the schema does not compile. */
export function nativeValidator(schema: Record<string, unknown>): ValidateFunction {
  let v = compiled.get(schema);
  if (v === undefined) {
    v = (schema.$schema === DRAFT_2020 ? compilePayloadSchema(schema) : compileDraft07Schema(schema)) as ValidateFunction;
    compiled.set(schema, v);
  }
  return v;
}

/** A native event a rule produced that the plugin's schema refuses: never sent, never retried. */
export class NativeSchemaError extends Error {
  override name = 'NativeSchemaError';
  readonly retryable = false;
  constructor(
    readonly destinationType: string,
    readonly ruleId: string,
    readonly problems: readonly string[],
  ) {
    super(`${destinationType}: rule ${ruleId} produced a native event the ${destinationType} schema refuses (${problems.join('; ')}); nothing sent`);
  }
}

/**
 * The problems of one rule's output (flat dot-path fields, expanded first) against `schema`,
 * each as `<JSON Pointer>: <message>`; empty when it conforms.
 * @example nativeProblems(schema, { event_name: 7 }) // ['/event_name: must be string']
 */
export function nativeProblems(schema: Record<string, unknown>, fields: Record<string, unknown>): string[] {
  const validate = nativeValidator(schema);
  if (validate(asExpanded(fields))) return [];
  return (validate.errors ?? []).map(describe);
}

function describe(e: ErrorObject): string {
  const where = e.instancePath === '' ? '/' : e.instancePath;
  const params = e.params as { additionalProperty?: string; allowedValues?: unknown[] };
  const extra = e.keyword === 'additionalProperties' ? ` "${params.additionalProperty}"`
    : e.keyword === 'enum' ? `: ${JSON.stringify(params.allowedValues)}` : '';
  return `${where}: ${e.message}${extra}`;
}

/** Where a destination type's native schema is found (the loaded plugins'); undefined when it has none. */
export type NativeSchemaOf = (destinationType: string) => Record<string, unknown> | undefined;

/** A literal output value the native schema refuses: `key` is the output key, `problems` as nativeProblems gives them. */
export interface LiteralOutputProblem {
  key: string;
  problems: string[];
}

/** Keywords whose verdict depends on the whole value they sit on (a branch taken or not). */
const COMBINATORS = new Set(['anyOf', 'oneOf', 'if', 'not', 'contains', 'discriminator']);

/**
 * What the schema refuses in a rule's constant outputs, known before any event: the output
 * keys whose value is a literal (a string, number or boolean, or an array of literals; not a
 * json-logic operation, whose value only an event decides; not null, which is left out).
 * The literals alone are checked, so what depends on the computed keys is never judged:
 * errors about an object the literals only share with computed members (a `required`
 * member, a branch of `anyOf`/`oneOf`/`if` chosen by the whole object) are not reported,
 * only those at or inside a literal's own place (or naming its key, as
 * `additionalProperties` does).
 * @example literalOutputProblems(ga4Schema, { name: 42, 'params.value': { var: 'event.value' } })
 * // → [{ key: 'name', problems: ['/name: must be string'] }]
 */
export function literalOutputProblems(schema: Record<string, unknown>, output: Record<string, unknown>): LiteralOutputProblem[] {
  const literals = Object.entries(output).filter(([, v]) => v !== null && isLiteral(v));
  if (literals.length === 0) return [];
  const validate = nativeValidator(schema);
  if (validate(expandDotPaths(Object.fromEntries(literals)))) return [];
  const places = literals.map(([key]) => ({ key, pointer: key.split('.').map(token).join('') }));
  const within = (pointer: string, outer: string) => pointer === outer || pointer.startsWith(`${outer}/`);
  const placeOf = (pointer: string) => places.find((p) => within(pointer, p.pointer));
  const subject = (e: ErrorObject): string => {
    const params = e.params as { additionalProperty?: string; propertyName?: string };
    const named = params.additionalProperty ?? params.propertyName;
    return named === undefined ? e.instancePath : e.instancePath + token(named);
  };
  const errors = validate.errors ?? [];
  // A branch chosen by an object the computed keys share: nothing under it is certain.
  const undecided = errors.filter((e) => COMBINATORS.has(e.keyword) && placeOf(e.instancePath) === undefined).map((e) => e.instancePath);
  const byKey = new Map<string, string[]>();
  for (const e of errors) {
    const place = placeOf(subject(e));
    if (place === undefined || undecided.some((u) => within(e.instancePath, u))) continue;
    byKey.set(place.key, [...(byKey.get(place.key) ?? []), describe(e)]);
  }
  return [...byKey].map(([key, problems]) => ({ key, problems }));
}

/** One JSON Pointer segment, as Ajv writes instance paths. */
const token = (segment: string): string => `/${segment.replace(/~/g, '~0').replace(/\//g, '~1')}`;

/** A json-logic value that evaluates to itself: no operation anywhere in it. */
function isLiteral(v: unknown): boolean {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  return Array.isArray(v) && v.every(isLiteral);
}
