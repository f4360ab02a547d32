// `tracklane migrate`: applies the store's migrations and exits, for operators who run
// schema changes as their own deployment step (PostgreSQL). Safe to run while instances
// run and from several places at once: PostgreSQL migrations take an advisory lock.
import { parseCommand, positionals } from './args.ts';
import type { CliContext } from './context.ts';
import { UsageError } from './output.ts';
import { usageFor } from './usage.ts';
import { createPool } from '../store/postgres/connection.ts';
import { migrate, PG_SCHEMA_VERSION } from '../store/postgres/migrations.ts';
import { MIGRATIONS } from '../store/sqlite/migrations.ts';

export async function runMigrate(args: string[], ctx: CliContext): Promise<void> {
  const cmd = ['migrate'];
  if (args[0] !== undefined && !args[0].startsWith('-')) throw new UsageError(`unknown command "migrate ${args[0]}"`, cmd);
  const { values, positionals: pos } = parseCommand(args, {}, cmd);
  if (values.help) return void process.stdout.write(usageFor(...cmd));
  positionals(pos, [], cmd);
  const config = ctx.config();
  const out = ctx.output(values.json === true);
  if (config.databaseUrl) {
    const pool = createPool({ url: config.databaseUrl, max: 1 });
    try {
      const applied = await migrate(pool);
      out.result({ store: 'postgres', applied, version: PG_SCHEMA_VERSION },
        () => (applied.length > 0 ? `applied migrations ${applied.join(', ')}; schema version ${PG_SCHEMA_VERSION}` : `schema up to date (version ${PG_SCHEMA_VERSION})`));
    } finally {
      await pool.end();
    }
    return;
  }
  // SQLite migrates on open; opening the store is the migration (and creates a missing one).
  await ctx.store({ create: true });
  out.result({ store: 'sqlite', applied: null, version: MIGRATIONS.length }, () => `schema up to date (version ${MIGRATIONS.length})`);
}
