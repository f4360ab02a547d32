// An endpoint's schema.json compiled once at load, and its errors turned into what the
// 400 CUSTOM_VALIDATION_ERROR carries: the field (dotted, indexes in brackets), what was
// expected there in words, and a sentence.
import type { ErrorObject } from 'ajv/dist/2020.js';
import { ajv, compilePayloadSchema } from '../schema/ajv.ts';
import { toField } from '../schema/translate-errors.ts';
import { describeSchema } from './expected-format.ts';

export interface BodyProblem {
  field: string;
  expected_format: string;
  message: string;
}

/** Every problem of a body, most useful first; empty when the body is valid. */
export type BodyValidator = (body: unknown) => BodyProblem[];


/** Keywords whose failure is best told as "must be <what the schema accepts>". */
const WHOLE_VALUE_KEYWORDS = new Set([
  'pattern', 'format', 'enum', 'const', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf',
  'minLength', 'maxLength', 'minItems', 'maxItems', 'uniqueItems', 'oneOf', 'anyOf', 'not',
]);
const COMBINATORS = /\/(anyOf|oneOf|not)\//;

function actual(data: unknown): string {
  if (data === null) return 'null';
  if (Array.isArray(data)) return 'an array';
  if (typeof data === 'number') return Number.isInteger(data) ? 'a whole number' : 'a number';
  if (typeof data === 'boolean') return 'true or false';
  return typeof data === 'object' ? 'an object' : `a ${typeof data}`;
}

type Schema = Record<string, unknown>;
const isSchema = (v: unknown): v is Schema => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The schema that describes the value at `pointer` (a JSON pointer into the body), walking
 * properties and items from the root; undefined when the walk finds none. Needed when the
 * failing keyword sits elsewhere than the field's own schema, as `then: { required }` does.
 */
function schemaAt(root: Schema, pointer: string): unknown {
  let s: unknown = root;
  for (const seg of pointer.split('/').slice(1)) {
    if (!isSchema(s)) return undefined;
    const key = seg.replace(/~1/g, '/').replace(/~0/g, '~');
    const props = isSchema(s.properties) ? s.properties : {};
    s = /^\d+$/.test(key) && s.items !== undefined ? s.items : props[key];
  }
  return s;
}

function problem(e: ErrorObject, root: Schema): BodyProblem {
  const parent = (e.parentSchema ?? {}) as Record<string, unknown>;
  const own = (parent.properties ?? {}) as Record<string, unknown>;
  const memberSchema = (member: string): unknown => own[member] ?? schemaAt(root, `${e.instancePath}/${member}`);
  const properties = own;
  switch (e.keyword) {
    case 'required': {
      const member = (e.params as { missingProperty: string }).missingProperty;
      const field = toField(e.instancePath, member);
      return { field, expected_format: describeSchema(memberSchema(member)), message: `${field} is required` };
    }
    case 'dependentRequired': {
      const { missingProperty, property } = e.params as { missingProperty: string; property: string };
      const field = toField(e.instancePath, missingProperty);
      return { field, expected_format: describeSchema(memberSchema(missingProperty)), message: `${field} is required when ${toField(e.instancePath, property)} is given` };
    }
    case 'additionalProperties':
    case 'unevaluatedProperties': {
      const member = (e.params as { additionalProperty?: string; unevaluatedProperty?: string });
      const field = toField(e.instancePath, member.additionalProperty ?? member.unevaluatedProperty);
      const known = Object.keys(properties);
      return {
        field,
        expected_format: known.length > 0 ? `no such field; the allowed fields here are ${known.join(', ')}` : 'no such field',
        message: `${field} is not a known field`,
      };
    }
    default: {
      const field = toField(e.instancePath);
      const name = field === '' ? 'the body' : field;
      const expected = field === '' && parent.type === 'object' ? 'a JSON object' : describeSchema(parent);
      const message = e.keyword === 'type'
        ? `${name} must be ${describeSchema({ type: parent.type })}, got ${actual(e.data)}`
        : WHOLE_VALUE_KEYWORDS.has(e.keyword) ? `${name} must be ${expected}` : `${name} ${e.message}`;
      return { field, expected_format: expected, message };
    }
  }
}

/**
 * Compiles `schema` with the service's draft 2020-12 instance (strict, so a typo in a
 * keyword fails at load rather than accepting anything; throws with ajv's reason). A schema
 * with an `$id` replaces the one loaded earlier under it (a folder reloaded while running).
 */
export function compileBodySchema(schema: Record<string, unknown>): BodyValidator {
  if (typeof schema.$id === 'string') ajv.removeSchema(schema.$id);
  const validate = compilePayloadSchema(schema);
  return (body) => {
    if (validate(body)) return [];
    const errors = validate.errors ?? [];
    // A branch of anyOf/oneOf failing says little on its own; the combinator's own error covers it.
    // `if` only says "must match then"; the then/else branch's own errors say what.
    const direct = errors.filter((e) => !COMBINATORS.test(e.schemaPath) && e.keyword !== 'if');
    const picked = direct.length > 0 ? direct : errors;
    const seen = new Set<string>();
    const out: BodyProblem[] = [];
    for (const e of picked) {
      const p = problem(e, schema);
      const key = `${p.field}\u0000${p.message}`;
      if (!seen.has(key)) out.push(p);
      seen.add(key);
    }
    return out;
  };
}
