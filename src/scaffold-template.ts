// The files `tracklane plugins new` and `customers new` write are kept as they are written, in
// a templates/ folder beside each scaffold (src/destinations/templates/,
// src/customers/templates/), each named after its file with `.tmpl` added (so no tool takes it
// for source), with `{{name}}` where a value goes. Read from the project, not from dist/, like
// every file read beside the code (docs/build.md).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from './build-state.cjs';

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
