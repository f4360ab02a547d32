// A real process restarted with one account's webhook rule file broken (7,000 levels deep):
// only that scope is held. Another account's webhook events and the same account's GA4
// events are delivered at once, /readyz names the held scope, and fixing the file delivers
// the held events, each once.
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { createAccountService } from '../../src/accounts/account-service.ts';
import { spawnServer, type SpawnedServer } from '../helpers/spawn-server.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { tempDir, waitFor } from '../helpers/test-server.ts';
import { checkout, SETTINGS } from '../delivery/delivery-fixture.ts';
import { shippedFolders } from '../helpers/shipped-folders.ts';

/** A webhook rule file whose `when` is `levels` operations deep (JSON text, built without recursion). */
const deepWebhookFile = (levels: number) =>
  `{"destination": "webhook", "rules": [{"id": "deep", "event": "*", "when": ${'{"and":['.repeat(levels)}true${']}'.repeat(levels)}, "output": {"type": "x"}}]}`;

describe('process: a broken account rule file holds only its own scope', function () {
  this.timeout(90_000);
  let dir: string;
  let data: string;
  let server: SpawnedServer | undefined;
  let hooks: DestinationDouble | undefined;
  let ga: DestinationDouble | undefined;
  after(async () => {
    if (server) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await hooks?.close();
    await ga?.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(data, { recursive: true, force: true });
  });

  it("delivers other accounts and A's other destinations at once, holds A × webhook until its file is fixed", async () => {
    dir = tempDir('tl-held-rules-');
    data = tempDir('tl-held-data-');
    cpSync(shippedFolders().rulesDir, dir, { recursive: true });
    hooks = await startDestinationDouble();
    ga = await startDestinationDouble();
    const file = join(data, 'tracklane.db');
    const setup = openSqliteStore({ file, writerThread: false });
    const accounts = createAccountService(setup);
    const a = await accounts.create({ name: 'Broken rules', tier: 'FLEX', addon: true });
    const b = await accounts.create({ name: 'Bystander', tier: 'FLEX', addon: true });
    const dst = () => `dst_${randomBytes(8).toString('hex')}`;
    const aHook = dst();
    await setup.destinations.add({ id: aHook, scriptId: a.account.scriptId, type: 'webhook', name: 'a hook', enabled: true, settings: SETTINGS.webhook(hooks.url) });
    await setup.destinations.add({ id: dst(), scriptId: a.account.scriptId, type: 'ga4', name: 'a ga4', enabled: true, settings: SETTINGS.ga4(ga.url) });
    await setup.destinations.add({ id: dst(), scriptId: b.account.scriptId, type: 'webhook', name: 'b hook', enabled: true, settings: SETTINGS.webhook(hooks.url) });
    await setup.close();
    const accountDir = join(dir, 'accounts', a.account.scriptId);
    mkdirSync(accountDir, { recursive: true });
    writeFileSync(join(accountDir, 'webhook.json'), deepWebhookFile(7_000));

    server = await spawnServer({ RULES_DIR: dir, DATA_DIR: data, ALLOW_PRIVATE_DESTINATIONS: '1' }, 30_000);
    const s = server;
    const readyz = async () => (await (await fetch(`${s.url}/readyz`)).json()) as { status: string; degraded?: string[] };
    const held = await readyz();
    expect(held.status).to.equal('ready');
    expect(held.degraded?.[0]).to.contain(`held for account ${a.account.scriptId} × webhook`);
    expect(held.degraded?.[0]).to.match(/RULE_TOO_DEEP/);

    const send = (who: { account: { scriptId: string }; accessToken: string }, id: string) =>
      fetch(`${s.url}/webhooks/service/event?id=${who.account.scriptId}`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-service-access-token': who.accessToken },
        body: JSON.stringify(checkout(id)),
      });
    expect((await send(a, 'A-1')).status).to.equal(200);
    expect((await send(b, 'B-1')).status).to.equal(200);
    const hookIds = () => hooks!.requests.map((r) => r.json<{ data: { event: { id: string } } }>().data.event.id);
    await hooks.waitFor(() => hookIds().includes('B-1'), 20_000, "another account's webhook delivered while A's rules are broken");
    await ga.waitFor(() => ga!.requests.some((r) => r.body.includes('A-1')), 20_000, "A's GA4 delivered while A's webhook rules are broken");
    // The fan-out that sent A-1 to GA4 kept it queued for A's webhook alone, in the same commit.
    const db = new Database(file, { readonly: true });
    try {
      const queued = db.prepare(`SELECT q.held_for FROM dispatch_queue q JOIN events e ON e.seq = q.event_seq WHERE e.event_id = 'A-1'`).all() as { held_for: string }[];
      expect(queued.map((q) => JSON.parse(q.held_for))).to.deep.equal([[aHook]]);
    } finally {
      db.close();
    }
    expect(hookIds()).to.not.include('A-1');

    // Fixed: A's held event goes to its webhook, and /readyz is whole again.
    writeFileSync(join(accountDir, 'webhook.json'), JSON.stringify({ destination: 'webhook', rules: [] }));
    await hooks.waitFor(() => hookIds().includes('A-1'), 20_000, "A's held webhook event delivered once the file is fixed");
    expect(await waitFor(async () => (await readyz()).degraded === undefined, 10_000, 100), '/readyz whole again').to.equal(true);
    expect(hookIds().sort()).to.deep.equal(['A-1', 'B-1']);
    expect(ga.requests.filter((r) => r.body.includes('A-1'))).to.have.length(1);
  });
});
