// The JSON Schema of a rule file (RuleFile in types.ts), compiled once on the service's
// Ajv instance, and the translation of its errors into `path: message` lines.
import type { ErrorObject } from 'ajv/dist/2020.js';
import { compilePayloadSchema } from '../schema/ajv.ts';
import { childPointer } from './json-pointer.ts';

/** Destination type names: the plugin folder names (`ga4`, `google-ads`, `meta-capi`). */
export const DESTINATION_NAME_RE = /^[a-z0-9][a-z0-9-]*$/;
/** Rule ids: `ga4.purchase`, `meta-capi.cart_viewed:view_content`. */
export const RULE_ID_RE = /^[A-Za-z0-9_][A-Za-z0-9_.:-]*$/;

const RULE_KEYS = ['id', 'event', 'when', 'disabled', 'description', 'output'] as const;

const ruleSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id'],
  properties: {
    id: { type: 'string', maxLength: 200, pattern: RULE_ID_RE.source },
    event: {
      type: ['string', 'array'],
      minLength: 1,
      minItems: 1,
      uniqueItems: true,
      items: { type: 'string', minLength: 1 },
    },
    when: true,
    disabled: { type: 'boolean' },
    description: { type: 'string' },
    output: { type: 'object', additionalProperties: true },
  },
  // A disabling entry (`{"id": "ga4.purchase", "disabled": true}`) needs nothing else.
  if: { type: 'object', required: ['disabled'], properties: { disabled: { const: true } } },
  then: true,
  else: { type: 'object', required: ['event', 'output'], properties: { event: true, output: true } },
} as const;

export const RULE_FILE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['destination', 'rules'],
  properties: {
    destination: { type: 'string', pattern: DESTINATION_NAME_RE.source },
    rules: { type: 'array', items: ruleSchema },
  },
} as const;

const validate = compilePayloadSchema(RULE_FILE_SCHEMA);

export interface SchemaProblem {
  /** JSON Pointer inside the file. */
  path: string;
  message: string;
}

/** Schema problems of one parsed rule file; empty when it conforms. */
export function checkRuleFileSchema(data: unknown): SchemaProblem[] {
  if (validate(data)) return [];
  const problems: SchemaProblem[] = [];
  const seen = new Set<string>();
  for (const e of validate.errors ?? []) {
    const p = translate(e);
    if (p === null) continue;
    const key = `${p.path}\0${p.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      problems.push(p);
    }
  }
  return problems;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string', array: 'an array', object: 'an object', boolean: 'true or false',
};

function translate(e: ErrorObject): SchemaProblem | null {
  const path = e.instancePath;
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'if':
      return null; // always paired with the `else` error that says what is missing
    case 'required':
      return { path, message: `missing required "${String(params.missingProperty)}"` };
    case 'additionalProperties': {
      const allowed = path === '' ? ['destination', 'rules'] : RULE_KEYS;
      return { path: childPointer(path, String(params.additionalProperty)), message: `unknown property (allowed: ${allowed.join(', ')})` };
    }
    case 'type':
      return { path, message: `must be ${String(params.type).split(',').map((t) => TYPE_NAMES[t] ?? t).join(' or ')}` };
    case 'pattern':
      if (path === '/destination') return { path, message: 'must be a destination type name: lowercase letters, digits and "-"' };
      return { path, message: 'must start with a letter, digit or "_" and hold only letters, digits and "_ . : -"' };
    case 'minLength':
      return { path, message: 'must not be empty' };
    case 'minItems':
      return { path, message: 'must name at least one event' };
    case 'uniqueItems':
      return { path, message: 'names an event twice' };
    default:
      return { path, message: e.message ?? e.keyword };
  }
}
