// The CLI entry: picks the command group, runs it, and funnels every failure into
// one stderr line and an exit code (1: the command failed; 2: the command line is wrong).
import { packageVersion } from '../package-version.ts';
import { projectRoot } from '../build-state.cjs';
import { createContext, type CliContext } from './context.ts';
import { loadCliSettings } from './settings.ts';
import { CliError, UsageError, errorLine } from './output.ts';
import { UNAVAILABLE_GROUPS, USAGE, usageFor } from './usage.ts';

type Group = (args: string[], ctx: CliContext) => Promise<void>;

// Loaded on demand, so `serve` does not load the account code and `--help` loads nothing.
const GROUPS: Record<string, () => Promise<Group>> = {
  accounts: async () => (await import('./accounts.ts')).runAccounts,
  events: async () => (await import('./events.ts')).runEvents,
  destinations: async () => (await import('./destinations.ts')).runDestinations,
  customers: async () => (await import('./customers.ts')).runCustomers,
  deliveries: async () => (await import('./deliveries.ts')).runDeliveries,
  stats: async () => (await import('./stats.ts')).runStats,
  plugins: async () => (await import('./destinations.ts')).runPlugins,
  rules: async () => (await import('./rules.ts')).runRules,
  serve: async () => (await import('./serve.ts')).runServe,
  migrate: async () => (await import('./migrate.ts')).runMigrate,
  backup: async () => (await import('./backup.ts')).runBackup,
  restore: async () => (await import('./restore.ts')).runRestore,
  'migrate-store': async () => (await import('./migrate-store.ts')).runMigrateStore,
};

/** Errors whose message is written for the operator and safe to print as is. */
const OPERATOR_ERRORS = new Set(['AccountInputError', 'ConfigError', 'EnvFileError', 'DestinationInputError', 'PluginLoadError', 'CustomerLoadError', 'BackupError', 'RestoreError', 'StoreCopyError']);

export async function main(argv: string[]): Promise<number> {
  const [group, ...rest] = argv;
  if (group === undefined || group === '--help' || group === '-h' || group === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (group === '--version' || group === '-v') {
    process.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  // Needs no settings and no store; its exit code is mocha's.
  if (group === 'test') {
    try {
      return await (await import('./test-folder.ts')).runTestFolder(rest);
    } catch (err) {
      return report(err);
    }
  }
  let settings;
  try {
    // The project folder's .env (or ENV_FILE), as `npm start` reads it: the same database.
    settings = loadCliSettings(process.env, { root: projectRoot(import.meta.url), cwd: process.cwd() });
  } catch (err) {
    return report(err);
  }
  const ctx = createContext(process.env, settings);
  try {
    if ((UNAVAILABLE_GROUPS as readonly string[]).includes(group)) {
      throw new CliError(`"${group}" is not available in this version`);
    }
    const load = Object.hasOwn(GROUPS, group) ? GROUPS[group] : undefined;
    if (!load) throw new UsageError(`unknown command "${group}"`);
    await (await load())(rest, ctx);
    // People see which database a command used (a second DATA_DIR is the classic trap);
    // --json output stays one clean document on stdout.
    const used = ctx.databaseInUse();
    if (used !== null && !ctx.jsonRequested()) process.stderr.write(`tracklane: database ${used}\n`);
    return 0;
  } catch (err) {
    return report(err);
  } finally {
    await ctx.close();
  }
}

function report(err: unknown): number {
  if (err instanceof UsageError) {
    process.stderr.write(errorLine(err.message) + '\n' + (err.usageOf.length ? usageFor(...err.usageOf) : USAGE));
    return err.exitCode;
  }
  if (err instanceof CliError) {
    process.stderr.write(errorLine(err.message));
    return err.exitCode;
  }
  const e = err instanceof Error ? err : new Error(String(err));
  process.stderr.write(errorLine(OPERATOR_ERRORS.has(e.name) ? e.message : `unexpected error: ${e.message}`));
  if (process.env.TRACKLANE_DEBUG) process.stderr.write(`${e.stack}\n`);
  return 1;
}

process.exitCode = await main(process.argv.slice(2));
