// The destination plugins that ship, found the way the loader finds them (every folder under
// plugins/), so the shared tests cover a new destination without a file outside its folder
// naming it. What a test expects of each plugin comes from the plugin's own definition.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadPlugins, type PluginRegistry } from '../../src/destinations/load-plugins.ts';

export const PLUGINS_DIR = fileURLToPath(new URL('../../plugins', import.meta.url));

/** The folder names under plugins/, in the loader's order (sorted). */
export function shippedPluginNames(): string[] {
  return readdirSync(PLUGINS_DIR, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
}

/** Every shipped plugin, loaded and checked by the real loader. */
export function shippedPlugins(): Promise<PluginRegistry> {
  return loadPlugins(PLUGINS_DIR);
}
