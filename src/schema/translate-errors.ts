// Turns ajv's errors into the service's issues: one code per the table in docs/api.md, a dotted
// field path, and a sentence a developer can act on. Runs only on the error path.
import type { ErrorObject } from 'ajv/dist/2020.js';
import type { ValidationCode } from '../errors.ts';
import { PAYLOAD_FORMATS, type PayloadFormat } from './formats.ts';
import { quote } from './guards.ts';
import type { Issue } from './types.ts';

const ARRAY_INDEX = /^\d+$/;
const ESCAPED_SLASH = /~1/g;
const ESCAPED_TILDE = /~0/g;
/** Where the event-level rule "a value needs a currency" lives in event-schema.ts. */
const VALUE_NEEDS_CURRENCY = '#/properties/event/then/';

/**
 * `/products/0/coupons/2/value` → `products[0].coupons[2].value`; `` (the body) stays ``.
 * @example toField('/products/1/price') // 'products[1].price'
 */
export function toField(pointer: string, member?: string): string {
  let field = '';
  if (pointer !== '') {
    for (const raw of pointer.slice(1).split('/')) {
      const seg = raw.includes('~') ? raw.replace(ESCAPED_SLASH, '/').replace(ESCAPED_TILDE, '~') : raw;
      field += ARRAY_INDEX.test(seg) ? `[${seg}]` : field === '' ? seg : `.${seg}`;
    }
  }
  if (member === undefined) return field;
  return field === '' ? member : `${field}.${member}`;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
};
/** Union types whose members only make sense together, named by the format they carry. */
const FORMAT_TYPE_NAMES: Record<string, string> = {
  'numeric-string': 'a number or a numeric string such as "19"',
  'timestamp': 'a Unix timestamp in milliseconds (a number) or an ISO 8601 date string',
};

function expectedTypes(type: unknown, format: unknown): string {
  if (typeof format === 'string' && FORMAT_TYPE_NAMES[format]) return FORMAT_TYPE_NAMES[format];
  const list = (Array.isArray(type) ? type : String(type).split(',')).filter((t) => t !== 'null');
  if (list.length === 1 && list[0] === 'boolean') return 'true or false';
  const names = list.map((t) => TYPE_NAMES[t] ?? t);
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
}

function actualType(data: unknown): string {
  if (data === null) return 'null';
  if (Array.isArray(data)) return 'an array';
  return TYPE_NAMES[typeof data] ?? typeof data;
}

/** Why a member was required, from where the failing keyword sits in the schema. */
function requiredBecause(schemaPath: string, eventName: string | undefined): string {
  if (schemaPath.startsWith(VALUE_NEEDS_CURRENCY)) return ' when event.value is given';
  if (schemaPath.startsWith('#/allOf/') && eventName !== undefined) return ` for ${eventName} events`;
  return '';
}

function translate(e: ErrorObject, eventName: string | undefined): Issue | null {
  const field = toField(e.instancePath);
  const p = e.params as Record<string, unknown>;
  const because = requiredBecause(e.schemaPath, eventName);
  const issue = (code: ValidationCode, f: string, message: string): Issue => ({ field: f, code, message });
  switch (e.keyword) {
    case 'if':
      return null; // the failing then/else branch reports the real problem
    case 'required': {
      const f = toField(e.instancePath, String(p.missingProperty));
      return issue('REQUIRED_FIELD_MISSING', f, `${f} is required${because}`);
    }
    case 'type':
      // Optional members accept null, so a null failing here sits where a value is required;
      // a null array element is just the wrong type.
      if (e.data === null && !field.endsWith(']')) {
        return issue('REQUIRED_FIELD_MISSING', field, `${field} is required${because} (null counts as missing)`);
      }
      return issue('INVALID_TYPE', field,
        `${field} must be ${expectedTypes(p.type, e.parentSchema?.format)}, got ${actualType(e.data)}`);
    case 'format': {
      const format = (PAYLOAD_FORMATS as Record<string, PayloadFormat>)[String(p.format)];
      const s = String(e.data);
      if (format) return issue(format.code, field, format.describe(field, s));
      return issue('INVALID_FORMAT', field, `${field} is not a valid ${String(p.format)}`);
    }
    case 'enum':
    case 'const': {
      const allowed = ((p.allowedValues as unknown[] | undefined) ?? [p.allowedValue]).filter((v) => v !== null);
      return issue('INVALID_VALUE', field, `${field} ${quote(e.data)} is not an allowed value; use one of: ${allowed.join(', ')}`);
    }
    case 'minimum':
      return issue(
        'OUT_OF_RANGE',
        field,
        p.limit === 0
          ? `${field} must not be negative, got ${String(e.data)}`
          : `${field} must be at least ${String(p.limit)}, got ${String(e.data)}`,
      );
    case 'exclusiveMinimum':
      return issue('OUT_OF_RANGE', field, `${field} must be greater than ${String(p.limit)}, got ${String(e.data)}`);
    case 'maximum':
    case 'exclusiveMaximum':
      return issue(
        'OUT_OF_RANGE',
        field,
        `${field} must be at most ${String(p.limit)}${because}, got ${String(e.data)}`,
      );
    case 'minLength':
      return issue('REQUIRED_FIELD_MISSING', field, `${field} is required and must not be empty`);
    case 'minItems':
      return issue('REQUIRED_FIELD_MISSING', field, `${field} must list at least one product${because}`);
    default:
      return issue('INVALID_VALUE', field, `${field} ${e.message ?? 'is not valid'}`);
  }
}

/**
 * Appends one issue per distinct (field, code) of `errors` to `out`. The first wins: a value
 * that breaks both the general and an event-specific rule is reported once. A field of the
 * wrong type reports only that: `true` as context.environment is a type error, not also a
 * value outside the list.
 */
export function translateErrors(errors: readonly ErrorObject[], eventName: string | undefined, out: Issue[]): void {
  const issues: Issue[] = [];
  for (const e of errors) {
    const issue = translate(e, eventName);
    if (issue === null) continue;
    if (issues.some((o) => o.field === issue.field && o.code === issue.code)) continue;
    issues.push(issue);
  }
  for (const issue of issues) {
    const mistyped = issue.code !== 'INVALID_TYPE' &&
      issues.some((o) => o.field === issue.field && o.code === 'INVALID_TYPE');
    if (!mistyped) out.push(issue);
  }
}
