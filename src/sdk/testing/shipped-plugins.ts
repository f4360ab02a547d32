// The destination plugins that ship, found the way the loader finds them (every folder under
// plugins/ that the repository tracks: see shipped-folders.ts), so the shared tests cover a new
// destination without a file outside its folder naming it, and an operator's own plugin
// folder changes none of them. What a test expects of each plugin comes from its definition.
import { loadPlugins, type PluginRegistry } from '../../destinations/load-plugins.ts';
import { shippedFolders, subfolderNames } from './shipped-folders.ts';
import { exampleSettingsOf, type ExampleSettings } from './example-settings.ts';

/** The folder the shipped plugins load from (plugins/ itself when it holds nothing else). */
export const PLUGINS_DIR = shippedFolders().pluginsDir;

/** The shipped plugins' folder names, in the loader's order (sorted). */
export function shippedPluginNames(): string[] {
  return subfolderNames(PLUGINS_DIR);
}

/** Every shipped plugin, loaded and checked by the real loader. */
export function shippedPlugins(): Promise<PluginRegistry> {
  return loadPlugins(PLUGINS_DIR);
}

/** Every shipped plugin's example settings (its example-settings.ts), by type, in the loader's order. */
export async function shippedExampleSettings(): Promise<Record<string, ExampleSettings>> {
  const out: Record<string, ExampleSettings> = {};
  for (const [name, { folder }] of await shippedPlugins()) out[name] = await exampleSettingsOf(folder);
  return out;
}
