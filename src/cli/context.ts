// What a command gets to work with: its output, the config and the store, both
// opened on first use so that usage errors and --help touch neither. A command opens an
// existing SQLite store only: `migrate` (and `serve`) alone create one, so a CLI that looks
// in the wrong place says so instead of answering from a new, empty database.
import { existsSync } from 'node:fs';
import { loadConfig, type Config } from '../config.ts';
import { usePluginRules } from '../rules/plugin-rules.ts';
import { describeDatabase, openStore, sqliteFile } from '../store/open-store.ts';
import { NoPgSchemaError } from '../store/postgres/migrations.ts';
import { describeModeChanges } from '../store/sqlite/private-files.ts';
import type { Store } from '../store/types.ts';
import { CliError, createOutput, type Output } from './output.ts';
import { describeSettings, type SettingsSource } from './settings.ts';

export interface CliContext {
  config(): Config;
  /** The store; a missing SQLite store is a CliError unless `create` (only `migrate` passes it). */
  store(opts?: { create?: boolean }): Promise<Store>;
  /** The SQLite store's file, which must exist (a CliError saying where it looked otherwise). */
  sqliteStore(): string;
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

/**
 * `settings`: how the settings were found (settings.ts); relative paths start at its root.
 * Without it (tests of a command alone), the working folder and no description.
 */
export function createContext(env: NodeJS.ProcessEnv = process.env, settings?: SettingsSource): ManagedContext {
  let config: Config | undefined;
  let store: Promise<Store> | undefined;
  let json = false;
  const getConfig = (): Config => {
    if (config === undefined) {
      config = loadConfig(env, settings?.root);
      // The plugins' rules.json files are the base layer of RULES_DIR for every rules command.
      usePluginRules(config.rulesDir, config.pluginsDirs);
    }
    return config;
  };
  const how = () => (settings ? ` ${describeSettings(settings)}.` : '');
  const existingSqliteStore = (): string => {
    const file = sqliteFile(getConfig());
    if (existsSync(file)) return file;
    throw new CliError(`no store at ${file}; nothing was created.${how()} Set DATA_DIR (or ENV_FILE) as the service has them, `
      + 'or run "tracklane migrate" to create a new store there');
  };
  return {
    config: getConfig,
    sqliteStore: existingSqliteStore,
    // stderr: a command's output (and its --json) stays what it always is.
    store: (opts = {}) => (store ??= Promise.resolve().then(async () => {
      if (!getConfig().databaseUrl && opts.create !== true) existingSqliteStore();
      try {
        return await openStore(getConfig(), 'cli', {
          // PostgreSQL: pending migrations are applied, but only `migrate` makes the schema in an empty database.
          migrate: opts.create === true ? true : 'existing',
          onModesTightened: (changes) => process.stderr.write(`tracklane: ${describeModeChanges(changes)}\n`),
        });
      } catch (err) {
        if (!(err instanceof NoPgSchemaError)) throw err;
        throw new CliError(`no tracklane schema in the PostgreSQL database ${describeDatabase(getConfig())}; nothing was created.${how()} `
          + 'Set DATABASE_URL (or ENV_FILE) as the service has them, or run "tracklane migrate" to create the schema there');
      }
    })),
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

