// Checks what a destination's rules produced against the plugin's own JSON Schema of one
// native event (`nativeSchema`), before anything is built or sent: a mapping mistake is
// then refused with the rule and the JSON path, never posted for the platform to reject.
// Draft-07 schemas compile on the service's draft-07 instance, 2020-12 ones on the payload
// instance (one Ajv instance per draft); each schema is compiled once.
import type { ErrorObject, ValidateFunction } from 'ajv';
import { compilePayloadSchema } from '../schema/ajv.ts';
import { compileDraft07Schema } from '../schema/ajv-draft07.ts';
import { asExpanded } from './dot-path.ts';

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
