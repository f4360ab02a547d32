// `tracklane restore FILE`: puts a backup made by `tracklane backup` in place of the SQLite
// store (src/store/sqlite/restore.ts), with the server stopped. PostgreSQL: pg_restore.
import { parseCommand, positionals } from './args.ts';
import type { CliContext } from './context.ts';
import { CliError } from './output.ts';
import { usageFor } from './usage.ts';
import { sqliteFile } from '../store/open-store.ts';
import { restoreSqlite } from '../store/sqlite/restore.ts';

export async function runRestore(args: string[], ctx: CliContext): Promise<void> {
  const cmd = ['restore'];
  const { values, positionals: pos } = parseCommand(args, {}, cmd);
  if (values.help) return void process.stdout.write(usageFor(...cmd));
  const [file] = positionals(pos, ['FILE'], cmd);
  const config = ctx.config();
  if (config.databaseUrl) {
    throw new CliError('DATABASE_URL is set, so the store is PostgreSQL: restore it with pg_restore (docs/operations.md); restore replaces the SQLite store');
  }
  const out = ctx.output(values.json === true);
  const r = restoreSqlite(file, sqliteFile(config));
  out.result(r, () => `restored ${r.file} as ${r.store} (${r.bytes} bytes, schema version ${r.schema_version}, integrity ok)\n`
    + (r.replaced === null ? 'there was no store there before' : `the store it replaced is kept as ${r.replaced}`));
}
