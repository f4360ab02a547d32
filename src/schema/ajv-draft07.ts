// The one draft-07 Ajv instance of the service, for the documents operators and plugin
// authors write against draft-07: custom endpoints' endpoint.json and destination plugins'
// settings. Strict (a typo in a keyword fails at load), every error at once, formats.
// Payloads use draft 2020-12 (schema/ajv.ts). createDraft07Ajv gives the build's validator
// generator the very same settings (precompiled.ts).
import { Ajv, type Options } from 'ajv';
import formatsPlugin from 'ajv-formats';
import { precompiledOrCompile } from './precompiled.ts';

/** `extra`: the build's code-generation options. */
export function createDraft07Ajv(extra: Options = {}): Ajv {
  const instance = new Ajv({ allErrors: true, strict: true, discriminator: true, ...extra });
  // ajv-formats is CommonJS with `exports.default`; this form works under both tsx and tsc.
  formatsPlugin.default(instance);
  return instance;
}

export const ajv07 = createDraft07Ajv();

/** `ajv07.compile`, or from dist/ the build's validator of the same schema (precompiled.ts). */
export const compileDraft07Schema = precompiledOrCompile(ajv07, 'draft07', import.meta.url);
