// What a command gets to work with: its output, the config and the store, both
// opened on first use so that usage errors and --help touch neither.
import { loadConfig, type Config } from '../config.ts';
import { usePluginRules } from '../rules/plugin-rules.ts';
import { describeDatabase, openStore } from '../store/open-store.ts';
import { describeModeChanges } from '../store/sqlite/private-files.ts';
import type { Store } from '../store/types.ts';
import { createOutput, type Output } from './output.ts';

export interface CliContext {
  config(): Config;
  store(): Promise<Store>;
  output(json: boolean): Output;
}

export interface ManagedContext extends CliContext {
  /** Closes the store if it was opened. */
  close(): Promise<void>;
  /** The database file (or PostgreSQL URL without credentials) the command opened, or null. */
  databaseInUse(): string | null;
  /** Whether the command asked for JSON output. */
  jsonRequested(): boolean;
}

export function createContext(env: NodeJS.ProcessEnv = process.env): ManagedContext {
  let config: Config | undefined;
  let store: Promise<Store> | undefined;
  let json = false;
  const getConfig = (): Config => {
    if (config === undefined) {
      config = loadConfig(env);
      // The plugins' rules.json files are the base layer of RULES_DIR for every rules command.
      usePluginRules(config.rulesDir, config.pluginsDir);
    }
    return config;
  };
  return {
    config: getConfig,
    // stderr: a command's output (and its --json) stays what it always is.
    store: () => (store ??= Promise.resolve().then(() => openStore(getConfig(), 'cli', {
      onModesTightened: (changes) => process.stderr.write(`tracklane: ${describeModeChanges(changes)}\n`),
    }))),
    output: (asJson) => {
      json ||= asJson;
      return createOutput(asJson);
    },
    databaseInUse: () => (store === undefined || config === undefined ? null : describeDatabase(config)),
    jsonRequested: () => json,
    async close() {
      if (store) await (await store.catch(() => null))?.close();
    },
  };
}

