// `tracklane backup FILE`: an online, consistent copy of the SQLite store, safe while the
// server runs (src/store/sqlite/backup.ts). PostgreSQL has its own tools: pg_dump.
import { parseCommand, positionals } from './args.ts';
import type { CliContext } from './context.ts';
import { CliError } from './output.ts';
import { usageFor } from './usage.ts';
import { backupSqlite } from '../store/sqlite/backup.ts';

export async function runBackup(args: string[], ctx: CliContext): Promise<void> {
  const cmd = ['backup'];
  const { values, positionals: pos } = parseCommand(args, { force: { type: 'boolean' } }, cmd);
  if (values.help) return void process.stdout.write(usageFor(...cmd));
  const [file] = positionals(pos, ['FILE'], cmd);
  const config = ctx.config();
  if (config.databaseUrl) {
    throw new CliError('DATABASE_URL is set, so the store is PostgreSQL: back it up with pg_dump (docs/operations.md); backup copies the SQLite store');
  }
  const out = ctx.output(values.json === true);
  const r = backupSqlite(ctx.sqliteStore(), file, { force: values.force === true });
  out.result(r, () => `backed up ${r.source} to ${r.file} (${r.bytes} bytes, schema version ${r.schema_version}, integrity ok)\n`
    + `it holds everything committed before ${r.snapshot_at}`);
}
