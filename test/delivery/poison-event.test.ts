// An event whose mapping kills the delivery thread (out of memory under DELIVERY_MEMORY_MB)
// or stalls it (the watchdog, DELIVERY_WATCHDOG_MS, ends it) is failed as `mapping_failed`
// after its second interruption and not mapped again, while another tenant's events are
// delivered; the process stays up throughout. Once the mapping is fixed, a replay delivers
// it. The poison is a test plugin (helpers/poison-test) whose mapping step runs away on
// events marked in user.id, as a rule producing ever larger values would.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer, waitFor, type TestServer, type TestAccount } from '../helpers/test-server.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { shippedFolders } from '../helpers/shipped-folders.ts';
import { INTAKE_PATHS } from '../../src/http/intake-routes.ts';
import { SETTINGS } from './delivery-fixture.ts';

const TOKEN = 'poison-admin-token-0123456789';
const POISON_PLUGIN = fileURLToPath(new URL('./helpers/poison-test', import.meta.url));

const lead = (id: string, userId?: string) => ({
  event: { name: 'lead_created', id }, context: { environment: 'prod', data_source: 'crm', url: 'https://shop.example/' },
  ...(userId === undefined ? {} : { user: { id: userId } }),
});

/** A server with the delivery thread under `env`, two tenants with a webhook each, and the poison plugin armed. */
function poisonServer(env: Record<string, string>) {
  const t = {} as { s: TestServer; poisoner: TestAccount; other: TestAccount; hook: DestinationDouble; armed: string; plugins: string };
  before(async () => {
    t.plugins = mkdtempSync(join(tmpdir(), 'tl-poison-plugins-'));
    const shipped = shippedFolders().pluginsDir;
    for (const name of readdirSync(shipped)) symlinkSync(join(shipped, name), join(t.plugins, name));
    symlinkSync(POISON_PLUGIN, join(t.plugins, 'poison-test'));
    t.armed = join(t.plugins, 'armed');
    writeFileSync(t.armed, '');
    t.hook = await startDestinationDouble();
    t.s = await startTestServer({ ALLOW_PRIVATE_DESTINATIONS: '1', DELIVERY_THREAD: '1', PLUGINS_DIR: t.plugins, ADMIN_TOKEN: TOKEN, ...env });
    t.poisoner = await t.s.account();
    t.other = await t.s.account();
    for (const a of [t.poisoner, t.other]) {
      await t.s.running.store.destinations.add({ id: `dst_${randomBytes(8).toString('hex')}`, scriptId: a.scriptId, type: 'webhook', name: 'hook', enabled: true, settings: SETTINGS.webhook(t.hook.url) });
    }
    await t.s.running.deliveryReady;
  });
  after(async () => {
    await t.s?.close();
    await t.hook?.close();
    if (t.plugins) rmSync(t.plugins, { recursive: true, force: true });
  });
  const delivered = () => t.hook.requests.map((r) => r.json().id as string);
  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${t.s.url}${path}`, {
      method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() as any };
  };
  const deliveriesOf = async (eventId: string): Promise<any[]> => (await admin('GET', `/admin/deliveries?event_id=${eventId}`)).body.items;
  const send = async (a: TestAccount, id: string, userId?: string) => expect((await t.s.post(INTAKE_PATHS.event, lead(id, userId), { account: a })).status).to.equal(200);

  /** The poison event is sent first, the other tenant's right after: both wait for the same thread. */
  async function poisonAlongsideAnother(kind: 'poison-oom' | 'poison-hang'): Promise<void> {
    const thread = t.s.running.deliveryThread!;
    const starts = thread.starts;
    const stalls = thread.stalls;
    const id = `${kind}-1`;
    await send(t.poisoner, id, `${kind}:${t.armed}`);
    await send(t.other, `${kind}-other-1`);
    await t.hook.waitFor(() => delivered().includes(`${kind}-other-1`), 100_000, 'the other tenant\'s event delivered');
    expect(await waitFor(async () => (await deliveriesOf(id)).length > 0, 60_000, 100), 'the poison event has a delivery').to.equal(true);
    const [d] = await deliveriesOf(id);
    expect(d).to.include({ status: 'failed', skip_reason: 'mapping_failed', attempts: 0 });
    expect(d.last_error).to.match(/stopped the delivery thread 2 times/);
    expect(thread.starts - starts, 'the thread died twice and was replaced each time').to.equal(2);
    expect(thread.stalls - stalls, kind === 'poison-hang' ? 'both times ended by the watchdog' : 'out of memory, not stalled').to.equal(kind === 'poison-hang' ? 2 : 0);
    // Not mapped a third time: a later event goes through the same thread.
    await send(t.other, `${kind}-other-2`);
    await t.hook.waitFor(() => delivered().includes(`${kind}-other-2`), 30_000, 'a later event delivered');
    expect(thread.starts - starts, 'no third death').to.equal(2);
    expect(delivered()).to.not.include(id);
    expect((await fetch(`${t.s.url}/healthz`)).status, 'the process stayed up').to.equal(200);
  }
  return { t, delivered, admin, deliveriesOf, poisonAlongsideAnother };
}

// Each death costs a restart of the thread (a second here, several on a busy test machine).
describe('delivery: poison events', function () {
  this.timeout(240_000);

  describe('a mapping that runs the delivery thread out of memory (DELIVERY_MEMORY_MB)', () => {
    const p = poisonServer({ DELIVERY_MEMORY_MB: '160', DELIVERY_WATCHDOG_MS: '120000' });

    it('is failed (mapping_failed) after the thread died of it twice; another tenant\'s events are delivered; the process stays up', () =>
      p.poisonAlongsideAnother('poison-oom'));

    it('is counted in /metrics', async () => {
      const text = await (await fetch(`${p.t.s.url}/metrics`)).text();
      expect(text).to.match(/tracklane_deliveries_mapping_failed_total\{destination_type="webhook"\} 1/);
    });

    it('once the mapping is fixed, replaying the failed delivery delivers its event', async () => {
      rmSync(p.t.armed);
      const [d] = await p.deliveriesOf('poison-oom-1');
      expect((await p.admin('POST', `/admin/deliveries/${d.id}/replay`, {})).body).to.deep.equal({ replayed: 1 });
      await p.t.hook.waitFor(() => p.delivered().includes('poison-oom-1'), 30_000, 'the replayed event delivered');
      // The double has the request before its attempt is recorded.
      const recorded = async () => (await p.deliveriesOf('poison-oom-1')).map((r) => [r.status, r.skip_reason]);
      await waitFor(async () => (await recorded()).length > 0, 10_000);
      expect(await recorded()).to.deep.equal([['delivered', null]]);
    });
  });

  describe('a mapping that stalls the delivery thread (DELIVERY_WATCHDOG_MS)', () => {
    const p = poisonServer({ DELIVERY_WATCHDOG_MS: '3000' });

    it('is failed (mapping_failed) after the watchdog ended the thread twice; another tenant\'s events are delivered', () =>
      p.poisonAlongsideAnother('poison-hang'));
  });
});
