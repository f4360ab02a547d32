// The build's side of precompiled.ts: ajv's standalone code generator turns the schemas known
// at build time into one CommonJS module of validators, keyed by schemaKey, one table per
// Ajv instance. Build-time only (src/build-validators.mjs); the tests check it against ajv.compile.
import { _ } from 'ajv';
import type { AnySchemaObject } from 'ajv';
import standalone from 'ajv/dist/standalone/index.js';
import { createPayloadAjv } from './ajv.ts';
import { createDraft07Ajv } from './ajv-draft07.ts';
import { schemaKey, type Dialect } from './precompiled.ts';

/**
 * The module's source. Schemas with an `$id` are left out (precompiled.ts compiles those),
 * and so is any that does not compile on its own: it is compiled, and refused, at run time
 * as before.
 */
export function generateValidatorsModule(schemas: Record<Dialect, readonly unknown[]>): { source: string; count: number } {
  // The generated code refers to each format as formats[name], the running instance's own, and
  // loads ajv's run-time helpers with the require it is given (precompiled.ts's).
  const code = { source: true, formats: _`formats` };
  const instances = { draft2020: createPayloadAjv({ code }), draft07: createDraft07Ajv({ code }) };
  let source = "'use strict';\n// Generated at build time by src/build-validators.mjs; do not edit.\n";
  let count = 0;
  for (const dialect of Object.keys(instances) as Dialect[]) {
    const ajv = instances[dialect];
    const keys: Record<string, string> = {};
    for (const schema of schemas[dialect]) {
      if (schema === null || typeof schema !== 'object' || Array.isArray(schema) || '$id' in schema) continue;
      const key = schemaKey(schema as AnySchemaObject);
      if (key in keys) continue;
      try {
        ajv.addSchema(schema as AnySchemaObject, key);
        ajv.getSchema(key);
      } catch {
        ajv.removeSchema(key);
        continue;
      }
      keys[key] = key;
    }
    count += Object.keys(keys).length;
    source += `exports.${dialect} = function (formats, require) {\nconst exports = {};\n${standalone.default(ajv, keys)}\nreturn exports;\n};\n`;
  }
  return { source, count };
}
