// The plugins' own default rule files (`plugins/<name>/rules.json`): the base layer under
// RULES_DIR. Precedence, highest first: a live store version, the RULES_DIR file of the
// same scope and destination, the plugin's rules.json. A process says once which plugins
// folder backs which rules directory (usePluginRules, at start); loading, checking,
// importing and watching that directory then see the plugin defaults too. A directory
// nobody registered (a test fixture, `rules check --dir`) has no plugin layer unless a
// caller passes `pluginsDir` itself.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The file name of a plugin's default rules inside its folder. */
export const PLUGIN_RULES_FILE = 'rules.json';

const registered = new Map<string, string>();

/** From now on, the rules in `rulesDir` sit on the default rule files of the plugins in `pluginsDir`. */
export function usePluginRules(rulesDir: string, pluginsDir: string): void {
  registered.set(resolve(rulesDir), resolve(pluginsDir));
}

/** The plugins folder whose defaults back `rulesDir`: the explicit one, else the registered one. */
export function pluginsDirFor(rulesDir: string, explicit?: string): string | undefined {
  return explicit ?? registered.get(resolve(rulesDir));
}

export interface PluginRuleFile {
  abs: string;
  /** The plugin's folder name. */
  destination: string;
}

/** Every plugin folder's rules.json, by folder name. Nothing when the folder does not exist. */
export function pluginRuleFiles(pluginsDir: string | undefined): PluginRuleFile[] {
  if (pluginsDir === undefined || !existsSync(pluginsDir)) return [];
  const out: PluginRuleFile[] = [];
  for (const name of readdirSync(pluginsDir).sort()) {
    if (name.startsWith('.')) continue;
    const abs = join(pluginsDir, name, PLUGIN_RULES_FILE);
    try {
      if (statSync(join(pluginsDir, name)).isDirectory() && statSync(abs).isFile()) out.push({ abs, destination: name });
    } catch {
      // no rules.json in this folder: the plugin ships no defaults
    }
  }
  return out;
}
