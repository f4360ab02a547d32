// The one Ajv instance of the service. Draft 2020-12, the dialect OpenAPI 3.1 embeds, so
// /openapi.json can carry the very schemas the validator runs. Compile at module load only.
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsPlugin from 'ajv-formats';
import { PAYLOAD_FORMATS } from './formats.ts';

/**
 * allErrors: a developer sees every problem of a payload at once.
 * strict: unknown keywords, misplaced types and undeclared required members fail at compile
 * time; union types (`["string", "null"]`) are allowed because null stands for "absent".
 * verbose: errors carry the offending data, which the translator needs for its messages.
 */
export const ajv = new Ajv2020({
  allErrors: true,
  strict: true,
  allowUnionTypes: true,
  verbose: true,
});

// ajv-formats is CommonJS with `exports.default`; this form works under both tsx and tsc.
formatsPlugin.default(ajv);

for (const [name, format] of Object.entries(PAYLOAD_FORMATS)) {
  ajv.addFormat(name, { type: 'string', validate: format.validate });
}
