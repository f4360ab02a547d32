// `tracklane backup` against a real server process that is ingesting: the copy is a valid
// store holding every event acknowledged before the backup started, and the restore of
// docs/operations.md (stop, `tracklane restore FILE`, start) serves it: the same token
// works, events from before the backup are duplicates, one from after it is new.
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { spawnServer, type SpawnedServer } from '../helpers/spawn-server.ts';
import { tempCli, type TempCli } from '../cli/run-cli.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { tempDir } from '../helpers/test-server.ts';

interface Shop {
  scriptId: string;
  token: string;
}

/** Endpoint 3, whose answer says whether the event was new or a duplicate. */
async function post(baseUrl: string, shop: Shop, id: string): Promise<{ status: number; message?: string }> {
  const r = await fetch(`${baseUrl}${INTAKE_PATHS.standard}?id=${shop.scriptId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-access-token': shop.token },
    body: JSON.stringify({ event: { name: 'lead_created', id }, context: { environment: 'prod', data_source: 'crm' } }),
  });
  const body = (await r.json().catch(() => ({}))) as { message?: string };
  return { status: r.status, message: body.message };
}

describe('process: backup while the server ingests, and restore', function () {
  this.timeout(90_000);
  let cli: TempCli;
  let server: SpawnedServer | undefined;

  afterEach(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    server = undefined;
    cli?.remove();
  });

  it('the copy holds every event acknowledged before it started; a server started on the restored file serves it', async () => {
    const empty = tempDir('tl-empty-');
    // Empty rule, plugin and customer folders: nothing an operator adds there changes this test.
    const folders = { RULES_DIR: empty, PLUGINS_DIR: empty, CUSTOMERS_DIR: empty };
    cli = tempCli({ env: folders });
    const env = { DATA_DIR: cli.dataDir, WORKERS: '1', ...folders };
    const created = await cli.json<{ script_id: string; access_token: string }>('accounts', 'create', '--name', 'Backup shop', '--tier', 'FLEX', '--addon');
    const shop = { scriptId: created.script_id, token: created.access_token };
    server = await spawnServer(env);
    const s = server;

    // Four clients send unique events until told to stop; an id counts once its 200 arrived.
    const acked: { id: string; at: number }[] = [];
    let stop = false;
    const client = async (c: number) => {
      for (let i = 0; !stop; i++) {
        const id = `E-${c}-${i}`;
        const r = await post(s.url, shop, id);
        expect(r.status, id).to.equal(200);
        acked.push({ id, at: Date.now() });
      }
    };
    let failure: unknown;
    const clients = [0, 1, 2, 3].map((c) => client(c).catch((err: unknown) => void (failure ??= err)));
    while (acked.length < 200 && failure === undefined) await new Promise((r) => setTimeout(r, 20));
    if (failure !== undefined) throw failure;

    const file = join(cli.dataDir, 'backups', 'tracklane-backup.db');
    mkdirSync(join(cli.dataDir, 'backups'));
    const before = acked.length;
    const backup = await cli.json<{ file: string; bytes: number; integrity: string; snapshot_at: string }>('backup', file);
    const during = acked.length - before;
    stop = true;
    await Promise.all(clients);
    if (failure !== undefined) throw failure;
    expect(backup).to.include({ file, integrity: 'ok' });
    expect(backup.bytes).to.be.greaterThan(0);
    expect(during, 'the server kept acknowledging events while the backup ran').to.be.greaterThan(0);
    const after = await post(s.url, shop, 'AFTER-1');
    expect(after.message).to.equal('Event accepted');

    const copy = new Database(file, { readonly: true, fileMustExist: true });
    expect(copy.pragma('integrity_check', { simple: true })).to.equal('ok');
    const stored = new Set(copy.prepare(`SELECT event_id FROM events WHERE status = 'accepted'`).pluck().all() as string[]);
    copy.close();
    // Whatever was acknowledged before the copy's snapshot, up to the last moment: the events
    // since the server's last WAL checkpoint are in the -wal file alone.
    const owed = acked.filter((a) => a.at < Date.parse(backup.snapshot_at)).map((a) => a.id);
    expect(owed.length).to.be.at.least(before);
    expect(owed.filter((id) => !stored.has(id)), 'acknowledged before the backup, missing from it').to.deep.equal([]);
    expect(stored.has('AFTER-1')).to.equal(false);

    // The restore, as documented.
    server.child.kill('SIGTERM');
    expect(await server.exited).to.equal(0);
    const restored = await cli.json<{ store: string; replaced: string }>('restore', file);
    expect(restored.store).to.equal(join(cli.dataDir, 'tracklane.db'));
    server = await spawnServer(env);

    const old = owed[owed.length - 1];
    expect((await post(server.url, shop, old)).message, 'an event from before the backup').to.equal('Duplicate event: already received, not forwarded again');
    expect((await post(server.url, shop, 'AFTER-1')).message, 'the event sent after the backup is not in the restored store').to.equal('Event accepted');
    expect((await post(server.url, shop, 'NEW-1')).message).to.equal('Event accepted');
    const listed = await cli.json<{ event_id: string }[]>('events', 'list', '--account', shop.scriptId, '--limit', '3');
    expect(listed.map((e) => e.event_id)).to.deep.equal(['NEW-1', 'AFTER-1', old]);
    rmSync(empty, { recursive: true, force: true });
  });
});
