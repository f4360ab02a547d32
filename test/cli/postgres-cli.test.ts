// The CLI against PostgreSQL: the same commands with DATABASE_URL, `migrate` on its own,
// and the database named (without its password) on stderr.
import { expect } from 'chai';
import pg from 'pg';
import { expectFailure, tempCli, type TempCli } from './run-cli.ts';
import { createTestDatabase, requirePostgres, type TestDatabase } from '../helpers/postgres.ts';
import { PG_SCHEMA_VERSION, PG_SCHEMA_VERSIONS } from '../../src/store/postgres/migrations.ts';

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('CLI on PostgreSQL', function () {
  this.timeout(60_000);
  let db: TestDatabase | undefined;
  let cli: TempCli;
  before(async function () {
    await requirePostgres(this);
    db = await createTestDatabase();
    cli = tempCli({ databaseUrl: db.url, store: false }); // the first test migrates it
  });
  after(async () => {
    cli?.remove();
    await db?.drop();
  });

  it('on a database without the schema, every command but migrate fails naming the database and how it was found, and creates nothing', async () => {
    const empty = await createTestDatabase();
    const bare = tempCli({ databaseUrl: empty.url, store: false });
    try {
      const tables = async () => {
        const c = new pg.Client({ connectionString: empty.url });
        await c.connect();
        try {
          return (await c.query<{ t: string }>("SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public'")).rows.map((r) => r.t);
        } finally {
          await c.end();
        }
      };
      for (const args of [['accounts', 'list'], ['accounts', 'create', '--name', 'Lost'], ['events', 'list'], ['rules', 'history'], ['stats']]) {
        expectFailure(await bare.run(...args), 1, new RegExp(`^tracklane: no tracklane schema in the PostgreSQL database ${escape(empty.url)}; nothing was created\\. `
          + 'DATABASE_URL from the environment; settings read from .* Set DATABASE_URL \\(or ENV_FILE\\) as the service has them, '
          + 'or run "tracklane migrate" to create the schema there\n$'));
      }
      expect(await tables(), 'no table made').to.deep.equal([]);
      expect((await bare.json<{ applied: number[] }>('migrate')).applied).to.deep.equal(PG_SCHEMA_VERSIONS);
      expect(await bare.json('accounts', 'list')).to.deep.equal([]);
    } finally {
      bare.remove();
      await empty.drop();
    }
  });

  it('migrate applies the schema once, then finds it up to date', async () => {
    const all = [...PG_SCHEMA_VERSIONS];
    expect(all[0]).to.equal(1);
    expect(all.at(-1)).to.equal(PG_SCHEMA_VERSION);
    expect(await cli.json('migrate')).to.deep.equal({ store: 'postgres', applied: all, version: PG_SCHEMA_VERSION });
    expect(await cli.json('migrate')).to.deep.equal({ store: 'postgres', applied: [], version: PG_SCHEMA_VERSION });
    const human = await cli.run('migrate');
    expect(human.stdout).to.equal(`schema up to date (version ${PG_SCHEMA_VERSION})\n`);
  });

  it('accounts, destinations and events work the same, and stderr names the database', async () => {
    const created = await cli.json<{ script_id: string; access_token: string }>('accounts', 'create', '--name', 'PG shop', '--tier', 'FLEX', '--addon');
    expect(created.script_id).to.match(/^[A-Z0-9]{8}$/);
    const listed = await cli.json<{ script_id: string }[]>('accounts', 'list');
    expect(listed.map((a) => a.script_id)).to.deep.equal([created.script_id]);
    const dest = await cli.json<{ id: string; type: string }>('destinations', 'add', created.script_id, '--type', 'webhook',
      '--config', JSON.stringify({ url: 'https://hooks.example.com/in', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }));
    expect(dest.type).to.equal('webhook');
    expect(await cli.json('events', 'list', '--account', created.script_id)).to.deep.equal([]);
    const shown = await cli.run('accounts', 'show', created.script_id);
    expect(shown.code).to.equal(0);
    expect(shown.stderr).to.equal(`tracklane: database ${db!.url}\n`);
  });
});
