// Says in words what a JSON Schema accepts, for error_context.expected_format: type,
// format, enum, const, pattern, length, range, items. A schema may say it better itself
// with the `expectedFormat` annotation, which wins.
type Schema = Record<string, unknown>;

const FORMAT_WORDS: Record<string, string> = {
  'date-time': 'an ISO 8601 date-time with a time zone, such as 2024-05-01T13:45:00Z',
  date: 'a date as YYYY-MM-DD, such as 2024-05-01',
  time: 'a time as HH:MM:SS with a time zone, such as 13:45:00Z',
  duration: 'an ISO 8601 duration such as P1DT2H',
  email: 'an e-mail address such as name@example.com',
  uri: 'an absolute URL such as https://example.com/page',
  url: 'an absolute URL such as https://example.com/page',
  'uri-reference': 'a URL or a relative reference such as /page',
  uuid: 'a UUID such as 123e4567-e89b-12d3-a456-426614174000',
  ipv4: 'an IPv4 address such as 203.0.113.7',
  ipv6: 'an IPv6 address such as 2001:db8::1',
  hostname: 'a host name such as shop.example.com',
};

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

const isSchema = (v: unknown): v is Schema => v !== null && typeof v === 'object' && !Array.isArray(v);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const lit = (v: unknown): string => JSON.stringify(v);

function orList(items: string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

function between(lo: number | undefined, hi: number | undefined, unit: string): string {
  if (lo !== undefined && hi !== undefined) return lo === hi ? `of exactly ${lo} ${unit}` : `of ${lo} to ${hi} ${unit}`;
  if (lo !== undefined) return `of at least ${lo} ${unit}`;
  if (hi !== undefined) return `of at most ${hi} ${unit}`;
  return '';
}

function numberRange(s: Schema): string {
  const min = num(s.minimum);
  const max = num(s.maximum);
  const xmin = num(s.exclusiveMinimum);
  const xmax = num(s.exclusiveMaximum);
  const parts: string[] = [];
  if (min !== undefined && max !== undefined) parts.push(`from ${min} to ${max}`);
  else {
    if (min !== undefined) parts.push(`of at least ${min}`);
    if (xmin !== undefined) parts.push(`greater than ${xmin}`);
    if (max !== undefined) parts.push(`of at most ${max}`);
    if (xmax !== undefined) parts.push(`less than ${xmax}`);
  }
  if (min !== undefined && max !== undefined) {
    if (xmin !== undefined) parts.push(`greater than ${xmin}`);
    if (xmax !== undefined) parts.push(`less than ${xmax}`);
  }
  const step = num(s.multipleOf);
  if (step !== undefined) parts.push(`in steps of ${step}`);
  return parts.join(' and ');
}

function describeType(type: string, s: Schema): string {
  if (type === 'string') {
    const format = typeof s.format === 'string' ? s.format : undefined;
    let out = format ? (FORMAT_WORDS[format] ?? `a string in ${format} format`) : 'a string';
    const len = between(num(s.minLength), num(s.maxLength), 'characters');
    if (len && !(format && FORMAT_WORDS[format])) out += ` ${len}`;
    if (typeof s.pattern === 'string') out += ` matching the pattern ${s.pattern}`;
    return out;
  }
  if (type === 'number' || type === 'integer') {
    const range = numberRange(s);
    return range ? `${TYPE_WORDS[type]} ${range}` : TYPE_WORDS[type];
  }
  if (type === 'array') {
    let out = 'an array';
    const items = isSchema(s.items) ? s.items : undefined;
    const count = between(num(s.minItems), num(s.maxItems), 'items');
    if (count) out += ` ${count}`;
    if (items) {
      const what = describeSchema(items);
      if (what !== 'any value') out += `, each ${what}`;
    }
    if (s.uniqueItems === true) out += ', without duplicates';
    return out;
  }
  if (type === 'object') {
    const required = Array.isArray(s.required) ? (s.required as string[]) : [];
    return required.length > 0 ? `an object with ${required.join(', ')}` : 'an object';
  }
  return TYPE_WORDS[type] ?? type;
}

/**
 * What `schema` accepts, in words.
 * @example describeSchema({ type: 'integer', minimum: 1, maximum: 99 }) // 'a whole number from 1 to 99'
 * @example describeSchema({ enum: ['paid', 'shipped'] })                 // 'one of "paid", "shipped"'
 */
export function describeSchema(schema: unknown): string {
  if (schema === true || schema === undefined) return 'any value';
  if (schema === false) return 'nothing: this field is not allowed';
  if (!isSchema(schema)) return 'any value';
  if (typeof schema.expectedFormat === 'string') return schema.expectedFormat;
  if ('const' in schema) return `exactly ${lit(schema.const)}`;
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map(lit).join(', ')}`;
  const alternatives = (Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : null) as unknown[] | null;
  if (alternatives && schema.type === undefined) return orList(alternatives.map(describeSchema));
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === 'string' ? [schema.type] : [];
  if (types.length === 0) return 'any value';
  return orList(types.map((t) => describeType(t, schema)));
}
