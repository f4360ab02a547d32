// The files `tracklane plugins new` and `customers new` write are kept as they are written, in
// a templates/ folder beside each scaffold (src/destinations/templates/,
// src/customers/templates/), each named after its file with `.tmpl` added (so no tool takes it
// for source), with `{{name}}` where a value goes. Read from the project, not from dist/, like
// every file read beside the code (docs/build.md).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from './build-state.cjs';
import { isEsmScope } from './load-module.ts';

const SRC = join(projectRoot(import.meta.url), 'src');

/**
 * `files`: the name to write → its template in src/`folder`/templates/ (without `.tmpl`), each
 * filled with `values`. A `{{name}}` with no value is an error: a template and its scaffold
 * cannot drift apart unseen.
 */
export function fillTemplates(folder: string, files: Readonly<Record<string, string>>, values: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, template] of Object.entries(files)) {
    const file = join(SRC, folder, 'templates', `${template}.tmpl`);
    out[name] = fillTemplate(readFileSync(file, 'utf8'), values, file);
  }
  return out;
}

/** `text` with every `{{name}}` replaced by `values[name]`; one with no value throws, naming `where`. */
export function fillTemplate(text: string, values: Readonly<Record<string, string>>, where: string): string {
  return text.replace(/\{\{(\w+)\}\}/g, (_, key: string) => {
    if (!Object.hasOwn(values, key)) throw new Error(`${where}: no value for {{${key}}}`);
    return values[key];
  });
}

/** Plugins, handlers and their tests are ES modules: a folder (outside this package) whose package.json does not say so gets one that does. */
export function declareEsModules(dir: string): void {
  if (!isEsmScope(dir)) writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ private: true, type: 'module' }, null, 2)}\n`);
}
