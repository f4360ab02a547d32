// The one draft 2020-12 Ajv instance of the service: the event payload schemas (the dialect
// OpenAPI 3.1 embeds, so /openapi.json carries the very schemas the validator runs; compiled
// at module load) and custom endpoints' schema.json files (compiled when a folder loads).
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsPlugin from 'ajv-formats';
import { PAYLOAD_FORMATS } from './formats.ts';

/**
 * allErrors: a developer sees every problem of a payload at once.
 * strict: unknown keywords, misplaced types and undeclared required members fail at compile
 * time; union types (`["string", "null"]`) are allowed because null stands for "absent".
 * verbose: errors carry the offending data, which the translator needs for its messages.
 * strictRequired off: `then: { required: [...] }` naming members declared beside `if` is
 * idiomatic in customers' schemas. multipleOfPrecision: without it, 19.99 is not a
 * multiple of 0.01 in binary floating point.
 */
export const ajv = new Ajv2020({
  allErrors: true,
  strict: true,
  strictRequired: false,
  allowUnionTypes: true,
  verbose: true,
  multipleOfPrecision: 9,
});

// Annotation only: the words a custom endpoint's 400 uses for a field (error_context.expected_format).
ajv.addKeyword({ keyword: 'expectedFormat', schemaType: 'string' });

// ajv-formats is CommonJS with `exports.default`; this form works under both tsx and tsc.
formatsPlugin.default(ajv);

for (const [name, format] of Object.entries(PAYLOAD_FORMATS)) {
  ajv.addFormat(name, { type: 'string', validate: format.validate });
}
