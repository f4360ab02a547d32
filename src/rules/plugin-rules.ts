// The plugins' own default rule files (`plugins/<name>/rules.json`): the base layer under
// RULES_DIR. Precedence, highest first: a live store version, the RULES_DIR file of the
// same scope and destination, the plugin's rules.json. A process says once which plugin
// folders back which rules directory (usePluginRules, at start); loading, checking,
// importing and watching that directory then see the plugin defaults too. A directory
// nobody registered (a test fixture, `rules check --dir`) has no plugin layer unless a
// caller passes `pluginsDir` itself.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { PluginFolders } from '../destinations/load-plugins.ts';

/** The file name of a plugin's default rules inside its folder. */
export const PLUGIN_RULES_FILE = 'rules.json';

const registered = new Map<string, readonly string[]>();

/** From now on, the rules in `rulesDir` sit on the default rule files of the plugins in `pluginsDir` (a folder, or several in load order). */
export function usePluginRules(rulesDir: string, pluginsDir: PluginFolders): void {
  registered.set(resolve(rulesDir), (typeof pluginsDir === 'string' ? [pluginsDir] : pluginsDir).map((d) => resolve(d)));
}

/** The plugin folders whose defaults back `rulesDir`: the explicit ones, else the registered ones. */
export function pluginsDirFor(rulesDir: string, explicit?: PluginFolders): PluginFolders | undefined {
  return explicit ?? registered.get(resolve(rulesDir));
}

export interface PluginRuleFile {
  abs: string;
  /** The plugin's folder name. */
  destination: string;
}

/**
 * Every plugin folder's rules.json, by folder name, the folders in load order; a type found
 * again in a later folder is the loader's error, not a second default. Nothing from a folder
 * that does not exist.
 */
export function pluginRuleFiles(pluginsDir: PluginFolders | undefined): PluginRuleFile[] {
  const out: PluginRuleFile[] = [];
  const seen = new Set<string>();
  for (const dir of typeof pluginsDir === 'string' ? [pluginsDir] : (pluginsDir ?? [])) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir).sort()) {
      if (name.startsWith('.') || seen.has(name)) continue;
      const abs = join(dir, name, PLUGIN_RULES_FILE);
      try {
        if (!statSync(join(dir, name)).isDirectory()) continue;
        seen.add(name);
        if (statSync(abs).isFile()) out.push({ abs, destination: name });
      } catch {
        // no rules.json in this folder: the plugin ships no defaults
      }
    }
  }
  return out.sort((a, b) => (a.destination < b.destination ? -1 : a.destination > b.destination ? 1 : 0));
}
