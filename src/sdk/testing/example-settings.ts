// A plugin folder's example settings: its `example-settings.ts` default-exports
// `(endpoint) => settings` that pass its schema and send to `endpoint` (a test double). Tests
// that cover every destination take each one's settings from its own folder, so adding a
// destination touches nothing outside it.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadModule } from '../../load-module.ts';

/** The file in a plugin folder that holds its example settings. */
export const EXAMPLE_SETTINGS_FILE = 'example-settings.ts';

export type ExampleSettings = (endpoint: string) => Record<string, unknown>;

/** The example settings of the plugin in `folder`, loaded as the service loads plugin code. */
export async function exampleSettingsOf(folder: string): Promise<ExampleSettings> {
  const file = join(folder, EXAMPLE_SETTINGS_FILE);
  if (!existsSync(file)) {
    throw new Error(`${folder} has no ${EXAMPLE_SETTINGS_FILE}: a destination folder default-exports (endpoint) => settings that pass its schema there`);
  }
  const mod = (await loadModule(file)) as { default?: unknown };
  if (typeof mod.default !== 'function') throw new Error(`${file} must default-export (endpoint: string) => settings`);
  return mod.default as ExampleSettings;
}
