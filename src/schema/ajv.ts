// The one draft 2020-12 Ajv instance of the service: the event payload schemas (the dialect
// OpenAPI 3.1 embeds, so /openapi.json carries the very schemas the validator runs; compiled
// at module load) and custom endpoints' schema.json files (compiled when a folder loads).
// createPayloadAjv gives the build's validator generator the very same settings (precompiled.ts).
import { Ajv2020, type Options } from 'ajv/dist/2020.js';
import formatsPlugin from 'ajv-formats';
import { PAYLOAD_FORMATS } from './formats.ts';
import { precompiledOrCompile } from './precompiled.ts';

/**
 * allErrors: a developer sees every problem of a payload at once.
 * strict: unknown keywords, misplaced types and undeclared required members fail at compile
 * time; union types (`["string", "null"]`) are allowed because null stands for "absent".
 * verbose: errors carry the offending data, which the translator needs for its messages.
 * strictRequired off: `then: { required: [...] }` naming members declared beside `if` is
 * idiomatic in customers' schemas. multipleOfPrecision: without it, 19.99 is not a
 * multiple of 0.01 in binary floating point. `extra`: the build's code-generation options.
 */
export function createPayloadAjv(extra: Options = {}): Ajv2020 {
  const instance = new Ajv2020({
    allErrors: true,
    strict: true,
    strictRequired: false,
    allowUnionTypes: true,
    verbose: true,
    multipleOfPrecision: 9,
    ...extra,
  });

  // Annotation only: the words a custom endpoint's 400 uses for a field (error_context.expected_format).
  instance.addKeyword({ keyword: 'expectedFormat', schemaType: 'string' });

  // ajv-formats is CommonJS with `exports.default`; this form works under both tsx and tsc.
  formatsPlugin.default(instance);

  for (const [name, format] of Object.entries(PAYLOAD_FORMATS)) {
    instance.addFormat(name, { type: 'string', validate: format.validate });
  }
  return instance;
}

export const ajv = createPayloadAjv();

/** `ajv.compile`, or from dist/ the build's validator of the same schema (precompiled.ts). */
export const compilePayloadSchema = precompiledOrCompile(ajv, 'draft2020', import.meta.url);
