// Compiling JSON Schemas with ajv cost each thread ~150 ms of CPU at start (and the first
// compile on an instance compiles its meta-schema too). The build generates, with ajv's own
// standalone code generator, the validators of every schema known then (src/build-validators.mjs);
// from dist/ a schema whose content matches one of them uses it instead of compiling it.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { AnySchemaObject, ValidateFunction } from 'ajv';
import { runsCompiled } from '../build-state.cjs';

/** Which Ajv instance a schema compiles on; the build generates one table of validators each. */
export type Dialect = 'draft2020' | 'draft07';

/**
 * The generated module (dist/src/schema/precompiled-validators.cjs): per dialect, validators by
 * schema key, given the instance's formats and a require for ajv's run-time helpers.
 */
type Tables = Record<Dialect, (formats: unknown, require: NodeJS.Require) => Record<string, ValidateFunction>>;

/** ajv's run-time helpers (ajv/dist/runtime/…) for the generated code: the package this module uses. */
const requireAjvRuntime = createRequire(import.meta.url);

/** Minimal view of an Ajv instance: what compiling and the generated code's formats need. */
interface AjvLike {
  formats: unknown;
  compile<T = unknown>(schema: AnySchemaObject): ValidateFunction<T>;
}

export const PRECOMPILED_FILE = 'precompiled-validators.cjs';

/**
 * The key of a schema: its JSON text's digest. A validator depends only on the schema's
 * content and the instance's options, so an edited schema (a customer's schema.json changed
 * since the build) simply misses and is compiled.
 */
export const schemaKey = (schema: AnySchemaObject): string => createHash('sha256').update(JSON.stringify(schema)).digest('base64url');

/**
 * `ajv.compile` that first looks the schema up among the build's validators (from dist/ only;
 * the sources always compile). Schemas with an `$id` always compile: ajv.compile also
 * registers them under it for `$ref`s from other schemas.
 */
export function precompiledOrCompile(ajv: AjvLike, dialect: Dialect, moduleUrl: string): <T = unknown>(schema: AnySchemaObject) => ValidateFunction<T> {
  let table: Record<string, ValidateFunction> | null | undefined = runsCompiled(moduleUrl) ? undefined : null;
  const load = (): Record<string, ValidateFunction> | null => {
    try {
      const tables = createRequire(moduleUrl)(`./${PRECOMPILED_FILE}`) as Tables;
      return tables[dialect](ajv.formats, requireAjvRuntime);
    } catch {
      return null; // A build without them (its generation failed): compile, as the sources do.
    }
  };
  return <T>(schema: AnySchemaObject): ValidateFunction<T> => {
    if (table === undefined) table = load();
    if (table !== null && schema.$id === undefined) {
      const key = schemaKey(schema);
      if (Object.hasOwn(table, key)) return table[key] as ValidateFunction<T>;
    }
    return ajv.compile<T>(schema);
  };
}
