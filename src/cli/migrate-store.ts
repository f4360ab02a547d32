// `tracklane migrate-store --to postgres://…`: moves a SQLite deployment to PostgreSQL by
// copying the whole store, all or nothing (src/store/postgres/copy-from-sqlite.ts), once
// the server has stopped: a store another process has open is refused unless --force.
import { parseCommand, positionals } from './args.ts';
import type { CliContext } from './context.ts';
import { CliError, UsageError, formatTable } from './output.ts';
import { usageFor } from './usage.ts';
import { describeDatabase } from '../store/open-store.ts';
import { storeInUse } from '../store/sqlite/in-use.ts';
import { copySqliteToPostgres } from '../store/postgres/copy-from-sqlite.ts';

export async function runMigrateStore(args: string[], ctx: CliContext): Promise<void> {
  const cmd = ['migrate-store'];
  const { values, positionals: pos } = parseCommand(args, { to: { type: 'string' }, force: { type: 'boolean' } }, cmd);
  if (values.help) return void process.stdout.write(usageFor(...cmd));
  positionals(pos, [], cmd);
  if (values.to === undefined) throw new UsageError('missing --to postgres://…', cmd);
  if (!/^postgres(ql)?:\/\//.test(values.to)) throw new UsageError('--to must be a postgres:// or postgresql:// URL', cmd);
  const config = ctx.config();
  if (config.databaseUrl) {
    throw new CliError('DATABASE_URL is set, so the store is PostgreSQL already; migrate-store copies the SQLite store under DATA_DIR: unset DATABASE_URL to run it');
  }
  const out = ctx.output(values.json === true);
  const source = ctx.sqliteStore();
  // The copy reads one snapshot: what a running server commits after it stays behind in SQLite.
  if (values.force !== true && storeInUse(source)) {
    throw new CliError(`a server (or another tracklane command) has the store ${source} open, and what it writes after the copy `
      + 'would stay behind: stop it first (or pass --force to copy anyway)');
  }
  const target = describeDatabase({ dataDir: config.dataDir, databaseUrl: values.to });
  const r = await copySqliteToPostgres({ sqliteFile: source, url: values.to, force: values.force === true });
  out.result({ source, target, ...r }, () => {
    const rows = Object.entries(r.tables).map(([t, n]) => [t, n]);
    const replaced = Object.keys(r.replaced).length > 0 ? ' (its earlier tracklane data replaced)' : '';
    return `copied ${source} to ${target}${replaced}, schema version ${r.schema_version}:\n`
      + formatTable(['table', 'rows'], rows).replace(/^/gm, '  ')
      + '\nstart the service with DATABASE_URL set to that database to use it';
  });
}
