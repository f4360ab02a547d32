// `tracklane plugins new TYPE`: writes a working destination folder — settings, native event
// schema, default rules, request builder, reply classifier, example settings, a golden test of
// the documented example request, unit tests and a README, from the templates in templates/
// (src/scaffold-template.ts) — into the first plugin folder listed (PLUGINS_DIR, else the
// shipped plugins/), then loads it with the real loader, so what was scaffolded is known to start. Its files import the service only as `tracklane/sdk` and
// `tracklane/sdk/testing`: the folder works wherever it lives, and its tests run with
// `npx tracklane test FOLDER`. The platform it talks to is a placeholder to replace.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { declareEsModules, fillTemplates } from '../scaffold-template.ts';
import { loadPluginFolder, NAME_RE, pluginFoldersIn, type PluginFolders } from './load-plugins.ts';

export class PluginScaffoldError extends Error {
  override name = 'PluginScaffoldError';
}

export interface ScaffoldedPlugin {
  type: string;
  folder: string;
  files: string[];
}

/** A TypeScript identifier from the type: `acme-ads` → `AcmeAds`. */
const pascal = (type: string): string => type.split('-').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');

/** The documented example: this payload, with the example settings, becomes the request README.md and golden.test.ts show. */
const EXAMPLE_PAYLOAD = {
  event: { name: 'checkout_completed', id: 'ORD-1001', value: 59.9, currency: 'EUR' },
  context: { environment: 'prod', data_source: 'website', url: 'https://shop.example/thanks' },
  products: [{ id: 'SKU-1', name: 'Lamp', category: 'Home', price_base: 59.9, price: 59.9, quantity: 1, tax_percent: 19 }],
  user: { email: ' Jane.Doe@Example.com ' },
  consent: { analytics: true, personalization: true, marketing: true },
};
/** SHA-256 of `jane.doe@example.com`, the example's e-mail in its normal form. */
const EXAMPLE_EMAIL_HASH = '86e0b9e56c17cc4d12387e1949b85053fbe73bc3ce5a1188713a9d300cc6133d';
const RECEIVED_AT = 1_760_000_000_000;

/** Writes <type>/ into `intoDir` (Config.newPluginsDir), refusing a type any of `pluginsDirs` already has; loads it before keeping it. */
export async function scaffoldPlugin(intoDir: string, pluginsDirs: PluginFolders, type: string): Promise<ScaffoldedPlugin> {
  if (!NAME_RE.test(type)) throw new PluginScaffoldError(`TYPE must be 2 to 40 lowercase letters, digits and dashes, starting with a letter, got "${type}"`);
  const taken = pluginFoldersIn(pluginsDirs).get(type);
  if (taken !== undefined) throw new PluginScaffoldError(`the plugin type "${type}" is already ${taken}; pick another name`);
  const folder = join(intoDir, type);
  if (existsSync(folder)) throw new PluginScaffoldError(`${folder} already exists; pick another name`);
  mkdirSync(folder, { recursive: true });
  declareEsModules(intoDir);
  const names = ['index.ts', 'settings.ts', 'native-schema.ts', 'rules.json', 'build-requests.ts', 'classify-response.ts', 'example-settings.ts', 'golden.test.ts'];
  const files = fillTemplates('destinations', { ...Object.fromEntries(names.map((n) => [n, n])), [`${type}.test.ts`]: 'plugin.test.ts', 'README.md': 'README.md' }, {
    type,
    Type: pascal(type),
    examplePayload: JSON.stringify(EXAMPLE_PAYLOAD, null, 2),
    exampleEmailHash: EXAMPLE_EMAIL_HASH,
    receivedAt: String(RECEIVED_AT),
    receivedAtIso: new Date(RECEIVED_AT).toISOString(),
    eventTime: String(Math.floor(RECEIVED_AT / 1000)),
  });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, name), text);
  try {
    await loadPluginFolder(folder);
  } catch (e) {
    rmSync(folder, { recursive: true, force: true });
    throw new PluginScaffoldError(`the scaffolded plugin does not load, nothing was kept: ${(e as Error).message}`);
  }
  return { type, folder, files: Object.keys(files) };
}
