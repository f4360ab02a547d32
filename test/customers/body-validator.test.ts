// error_context for custom endpoints: the field path and, in words, what the schema expects
// there — from type, format, enum, const, pattern, length and range, or `expectedFormat`.
import { expect } from 'chai';
import { compileBodySchema } from '../../src/customers/body-validator.ts';
import { describeSchema } from '../../src/customers/expected-format.ts';

describe('custom endpoints: expected_format in words', () => {
  const cases: [unknown, string][] = [
    [{ type: 'string' }, 'a string'],
    [{ type: 'string', minLength: 1, maxLength: 64 }, 'a string of 1 to 64 characters'],
    [{ type: 'string', minLength: 8 }, 'a string of at least 8 characters'],
    [{ type: 'string', pattern: '^[A-Z]{3}$' }, 'a string matching the pattern ^[A-Z]{3}$'],
    [{ type: 'string', format: 'date-time' }, 'an ISO 8601 date-time with a time zone, such as 2024-05-01T13:45:00Z'],
    [{ type: 'string', format: 'date' }, 'a date as YYYY-MM-DD, such as 2024-05-01'],
    [{ type: 'string', format: 'email' }, 'an e-mail address such as name@example.com'],
    [{ type: 'string', format: 'uuid' }, 'a UUID such as 123e4567-e89b-12d3-a456-426614174000'],
    [{ type: 'string', format: 'ipv6' }, 'an IPv6 address such as 2001:db8::1'],
    [{ type: 'integer', minimum: 1, maximum: 99 }, 'a whole number from 1 to 99'],
    [{ type: 'number', exclusiveMinimum: 0 }, 'a number greater than 0'],
    [{ type: 'number', minimum: 0, multipleOf: 0.01 }, 'a number of at least 0 and in steps of 0.01'],
    [{ type: 'number', maximum: 5 }, 'a number of at most 5'],
    [{ type: 'boolean' }, 'true or false'],
    [{ type: ['string', 'null'] }, 'a string or null'],
    [{ enum: ['paid', 'shipped', 1] }, 'one of "paid", "shipped", 1'],
    [{ const: 'v1' }, 'exactly "v1"'],
    [{ type: 'array', minItems: 1, items: { type: 'string' } }, 'an array of at least 1 items, each a string'],
    [{ type: 'array', uniqueItems: true }, 'an array, without duplicates'],
    [{ type: 'object', required: ['a', 'b'] }, 'an object with a, b'],
    [{ anyOf: [{ type: 'string', format: 'email' }, { type: 'integer' }] }, 'an e-mail address such as name@example.com or a whole number'],
    [{ type: 'string', pattern: '^x', expectedFormat: 'an x-code such as x1' }, 'an x-code such as x1'],
    [{}, 'any value'],
    [true, 'any value'],
  ];
  for (const [schema, words] of cases) {
    it(`${JSON.stringify(schema)} → ${words}`, () => expect(describeSchema(schema)).to.equal(words));
  }
});

describe('custom endpoints: body validator', () => {
  const validate = compileBodySchema({
    type: 'object',
    additionalProperties: false,
    required: ['id', 'lines'],
    dependentRequired: { amount: ['currency'] },
    properties: {
      id: { type: 'string', pattern: '^A-\\d+$', expectedFormat: 'A- then digits, such as A-12' },
      amount: { type: 'number', minimum: 0 },
      currency: { enum: ['EUR', 'RON'] },
      lines: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          required: ['sku'],
          properties: { sku: { type: 'string', minLength: 1 }, qty: { type: 'integer', minimum: 1 } },
        },
      },
      kind: { enum: ['a', 'b'] },
      contact: { oneOf: [{ type: 'string', format: 'email' }, { type: 'string', pattern: '^\\+\\d+$' }] },
    },
    if: { properties: { kind: { const: 'b' } }, required: ['kind'] },
    then: { required: ['amount'] },
  });

  it('accepts a valid body', () => {
    expect(validate({ id: 'A-1', lines: [{ sku: 's' }] })).to.deep.equal([]);
  });

  const cases: [string, unknown, string, string, string][] = [
    ['the body not an object', [1], '', 'a JSON object', 'the body must be an object, got an array'],
    ['a missing member', { lines: [{ sku: 's' }] }, 'id', 'A- then digits, such as A-12', 'id is required'],
    ['a pattern', { id: 'B-1', lines: [{ sku: 's' }] }, 'id', 'A- then digits, such as A-12', 'id must be A- then digits, such as A-12'],
    ['a nested item', { id: 'A-1', lines: [{ sku: 's' }, { sku: 's', qty: 0 }] }, 'lines[1].qty', 'a whole number of at least 1', 'lines[1].qty must be a whole number of at least 1'],
    ['a missing nested member', { id: 'A-1', lines: [{}] }, 'lines[0].sku', 'a string of at least 1 characters', 'lines[0].sku is required'],
    ['an empty array', { id: 'A-1', lines: [] }, 'lines', 'an array of at least 1 items, each an object with sku', 'lines must be an array of at least 1 items, each an object with sku'],
    ['an unknown member', { id: 'A-1', lines: [{ sku: 's' }], colour: 1 }, 'colour', 'no such field; the allowed fields here are id, amount, currency, lines, kind, contact', 'colour is not a known field'],
    ['a dependent member', { id: 'A-1', lines: [{ sku: 's' }], amount: 5 }, 'currency', 'one of "EUR", "RON"', 'currency is required when amount is given'],
    ['an enum', { id: 'A-1', lines: [{ sku: 's' }], amount: 5, currency: 'USD' }, 'currency', 'one of "EUR", "RON"', 'currency must be one of "EUR", "RON"'],
    ['if/then', { id: 'A-1', lines: [{ sku: 's' }], kind: 'b' }, 'amount', 'a number of at least 0', 'amount is required'],
    ['oneOf', { id: 'A-1', lines: [{ sku: 's' }], contact: 'nobody' }, 'contact',
      'an e-mail address such as name@example.com or a string matching the pattern ^\\+\\d+$',
      'contact must be an e-mail address such as name@example.com or a string matching the pattern ^\\+\\d+$'],
    ['a type', { id: 7, lines: [{ sku: 's' }] }, 'id', 'A- then digits, such as A-12', 'id must be a string, got a whole number'],
  ];
  for (const [what, body, field, expected, message] of cases) {
    it(`${what} → ${field || '(body)'}`, () => {
      const [first] = validate(body);
      expect(first).to.deep.equal({ field, expected_format: expected, message });
    });
  }

  it('reports every problem, first the one error_context names', () => {
    const problems = validate({ lines: [{ qty: 'x' }] });
    expect(problems.map((p) => p.field)).to.deep.equal(['id', 'lines[0].sku', 'lines[0].qty']);
  });
});

describe('custom endpoints: decimals', () => {
  it('multipleOf 0.01 accepts every two-decimal amount despite binary floating point, refuses a third decimal', () => {
    const validate = compileBodySchema({ type: 'object', properties: { a: { type: 'number', multipleOf: 0.01 } } });
    for (const a of [0.07, 0.29, 1.15, 4.35, 19.99, 144.8, 1234.56, 99999.99]) expect(validate({ a }), String(a)).to.deep.equal([]);
    expect(validate({ a: 19.995 })[0].field).to.equal('a');
  });
});
