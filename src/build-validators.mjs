// Run by src/build.mjs once tsc has written the build: the validators of every JSON Schema
// known at build time (the event payload's, the service's own documents', the shipped
// plugins' settings and native schemas, the shipped custom endpoints' schema.json) generated
// into <build>/src/schema/precompiled-validators.cjs (schema/generate-validators.ts), which
// the build's schema/precompiled.js uses instead of compiling them at start.
// Usage: node src/build-validators.mjs <build dir>
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const build = process.argv[2];
const load = (rel) => import(pathToFileURL(join(build, rel)).href);
const { generateValidatorsModule } = await load('src/schema/generate-validators.js');
const { PRECOMPILED_FILE } = await load('src/schema/precompiled.js');

const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';
const schemas = {
  draft2020: [
    (await load('src/schema/event-schema.js')).eventPayloadSchema,
    (await load('src/schema/object-schemas.js')).consentFormatSchema,
    (await load('src/rules/rule-schema.js')).RULE_FILE_SCHEMA,
  ],
  draft07: [(await load('src/customers/endpoint-config.js')).endpointConfigSchema],
};

for (const folder of readdirSync(join(build, 'plugins'), { withFileTypes: true })) {
  if (!folder.isDirectory()) continue;
  const plugin = (await load(`plugins/${folder.name}/index.js`)).default;
  if (plugin?.settingsSchema) schemas.draft07.push(plugin.settingsSchema);
  if (plugin?.nativeSchema) schemas[plugin.nativeSchema.$schema === DRAFT_2020 ? 'draft2020' : 'draft07'].push(plugin.nativeSchema);
}

// Custom endpoints' schema.json files are read from the project (this file's parent folder).
const root = fileURLToPath(new URL('..', import.meta.url));
for (const entry of readdirSync(join(root, 'customers'), { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || entry.name !== 'schema.json') continue;
  try {
    schemas.draft2020.push(JSON.parse(readFileSync(join(entry.parentPath, entry.name), 'utf8')));
  } catch {
    // Not JSON: the server refuses the folder at load, with its own message.
  }
}

const { source, count } = generateValidatorsModule(schemas);
writeFileSync(join(build, 'src/schema', PRECOMPILED_FILE), source);
process.stdout.write(`tracklane: generated the validators of ${count} schemas\n`);
