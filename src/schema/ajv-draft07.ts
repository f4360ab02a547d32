// The one draft-07 Ajv instance of the service, for the documents operators and plugin
// authors write against draft-07: custom endpoints' endpoint.json and destination plugins'
// settings. Strict (a typo in a keyword fails at load), every error at once, formats.
// Payloads use draft 2020-12 (schema/ajv.ts).
import { Ajv } from 'ajv';
import formatsPlugin from 'ajv-formats';

export const ajv07 = new Ajv({ allErrors: true, strict: true, discriminator: true });

// ajv-formats is CommonJS with `exports.default`; this form works under both tsx and tsc.
formatsPlugin.default(ajv07);
