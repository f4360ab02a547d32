// Moving a running deployment from SQLite to PostgreSQL with real servers on both sides: a
// SQLite server takes events (delivered to one receiver, pending for another that is down),
// stops; `migrate-store` copies the store; a server on DATABASE_URL then accepts the same
// token, still refuses a seen event.id as a duplicate, serves the account's rule version,
// and delivers the pending deliveries once the receiver is up, none of the delivered twice.
import { expect } from 'chai';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnServer, ROOT, type SpawnedServer } from '../helpers/spawn-server.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { createTestDatabase, requirePostgres, type TestDatabase } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/test-server.ts';
import { expectFailure, tempCli, type TempCli } from '../cli/run-cli.ts';
import { SETTINGS } from '../delivery/delivery-fixture.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';

interface Shop {
  scriptId: string;
  token: string;
}

/** Endpoint 3, whose answer says whether the event was new or a duplicate. */
async function post(baseUrl: string, shop: Shop, id: string): Promise<string | undefined> {
  const r = await fetch(`${baseUrl}${INTAKE_PATHS.standard}?id=${shop.scriptId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-access-token': shop.token },
    body: JSON.stringify({ event: { name: 'lead_created', id }, context: { environment: 'prod', data_source: 'crm', url: 'https://shop.example/' } }),
  });
  expect(r.status, id).to.equal(200);
  return ((await r.json()) as { message?: string }).message;
}

const ids = (hook: DestinationDouble, since = 0): string[] => hook.requests.filter((r) => r.at >= since).map((r) => r.json<{ id: string }>().id);

describe('process: migrate-store from a SQLite server to a PostgreSQL server', function () {
  this.timeout(120_000);
  let db: TestDatabase | undefined;
  let up: DestinationDouble | undefined;
  let down: DestinationDouble | undefined;
  let server: SpawnedServer | undefined;
  let folders: string | undefined;
  const clis: TempCli[] = [];

  before(async function () {
    await requirePostgres(this);
  });
  after(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await up?.close();
    await down?.close();
    await db?.drop();
    for (const c of clis) c.remove();
    if (folders) rmSync(folders, { recursive: true, force: true });
  });

  it('accounts, tokens, destinations, rules, dedup keys and pending deliveries all move', async () => {
    // Only the webhook plugin, no rule files, no custom endpoints: nothing an operator adds changes this test.
    folders = tempDir('tl-move-');
    for (const d of ['plugins', 'rules', 'customers']) mkdirSync(join(folders, d));
    symlinkSync(join(ROOT, 'plugins/webhook'), join(folders, 'plugins/webhook'));
    const env = { PLUGINS_DIR: join(folders, 'plugins'), RULES_DIR: join(folders, 'rules'), CUSTOMERS_DIR: join(folders, 'customers'), ALLOW_PRIVATE_DESTINATIONS: '1' };
    const sqliteCli = tempCli({ env });
    clis.push(sqliteCli);
    up = await startDestinationDouble();
    down = await startDestinationDouble();
    down.otherwise({ status: 503, body: { error: 'down for maintenance' } });

    const created = await sqliteCli.json<{ script_id: string; access_token: string }>('accounts', 'create', '--name', 'Moving shop', '--tier', 'FLEX', '--addon');
    const shop = { scriptId: created.script_id, token: created.access_token };
    const destinations = [
      await sqliteCli.json<{ id: string }>('destinations', 'add', shop.scriptId, '--type', 'webhook', '--name', 'up', '--config', JSON.stringify(SETTINGS.webhook(up.url))),
      await sqliteCli.json<{ id: string }>('destinations', 'add', shop.scriptId, '--type', 'webhook', '--name', 'down', '--config', JSON.stringify(SETTINGS.webhook(down.url))),
    ].map((d) => d.id).sort();
    const ruleFile = join(folders, 'account-webhook.json');
    writeFileSync(ruleFile, JSON.stringify({
      destination: 'webhook',
      rules: [{ id: 'webhook.event', event: '*', output: { type: { var: 'event.name' }, 'data.event': { var: 'event' }, 'data.rules': { cat: ['account ', { var: 'event.id' }] } } }],
    }));
    const { version: published } = await sqliteCli.json<{ version: { version: number } }>('rules', 'publish', ruleFile, '--scope', shop.scriptId, '--message', 'per-account rules');

    server = await spawnServer({ DATA_DIR: sqliteCli.dataDir, WORKERS: '1', ...env });
    const sent = ['E-1', 'E-2', 'E-3', 'E-4', 'E-5'];
    for (const id of sent) expect(await post(server.url, shop, id)).to.equal('Event accepted');
    await up.waitFor(() => sent.every((id) => ids(up!).includes(id)), 15_000, 'the up receiver has every event');
    await down.waitFor(() => sent.every((id) => ids(down!).includes(id)), 15_000, 'the down receiver was tried for every event');
    expect(up.requests[0].json().data.rules, 'the account rule version serves').to.equal('account E-1');
    server.child.kill('SIGTERM');
    expect(await server.exited).to.equal(0);
    server = undefined;
    const pending = await sqliteCli.json<{ status: string }[]>('deliveries', 'list', '--account', shop.scriptId, '--status', 'pending');
    expect(pending).to.have.length(5);

    db = await createTestDatabase();
    const moved = await sqliteCli.json<{ tables: Record<string, number>; target: string }>('migrate-store', '--to', db.url);
    expect(moved.target).to.equal(db.url);
    expect(moved.tables).to.include({ accounts: 1, access_tokens: 1, destinations: 2, events: 5, dedup_keys: 5, deliveries: 5, delivery_attempts: 10, rule_versions: 1, rule_live: 1 });
    expectFailure(await sqliteCli.run('migrate-store', '--to', db.url), 1, /^tracklane: the target already holds tracklane data \(rows: accounts 1, .*\); nothing was copied\. --force replaces it\n$/);

    const pgCli = tempCli({ databaseUrl: db.url, env });
    clis.push(pgCli);
    const switchedAt = Date.now();
    down.otherwise({ status: 200, body: {} });
    server = await spawnServer({ DATABASE_URL: db.url, WORKERS: '1', ...env }, 30_000);

    expect(await post(server.url, shop, 'E-1'), 'dedup keys moved').to.equal('Duplicate event: already received, not forwarded again');
    expect(await post(server.url, shop, 'NEW-1'), 'the same access token').to.equal('Event accepted');
    expect((await pgCli.json<{ name: string }>('accounts', 'show', shop.scriptId)).name).to.equal('Moving shop');
    expect((await pgCli.json<{ id: string }[]>('destinations', 'list', shop.scriptId)).map((d) => d.id).sort()).to.deep.equal(destinations);
    const history = await pgCli.json<{ version: number; scope: string; message: string }[]>('rules', 'history');
    expect(history.map((h) => [h.version, h.scope, h.message])).to.deep.equal([[published.version, shop.scriptId, 'per-account rules']]);

    // The pending deliveries keep their schedule (a retry within about 10 s of the first try).
    const owed = [...sent, 'NEW-1'];
    await down.waitFor(() => owed.every((id) => ids(down!, switchedAt).includes(id)), 40_000, 'the pending deliveries, delivered from PostgreSQL');
    await up.waitFor(() => ids(up!).includes('NEW-1'), 15_000, 'the new event');
    expect(up.requests.find((r) => r.json().id === 'NEW-1')!.json().data.rules, 'the live rule version moved').to.equal('account NEW-1');
    const once = (hook: DestinationDouble, from: number) => {
      const counts = new Map<string, number>();
      for (const id of ids(hook, from)) counts.set(id, (counts.get(id) ?? 0) + 1);
      return [...counts].filter(([, n]) => n > 1);
    };
    expect(once(up, 0), 'nothing delivered twice').to.deep.equal([]);
    expect(once(down, switchedAt), 'nothing delivered twice').to.deep.equal([]);
    const delivered = await pgCli.json<{ status: string }[]>('deliveries', 'list', '--account', shop.scriptId, '--status', 'pending');
    expect(delivered).to.deep.equal([]);
  });
});
