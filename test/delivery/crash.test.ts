// kill -9 in the middle of load: the real server (node src/index.cjs, npm start's entry) takes a few
// hundred concurrent events for an account with four destinations on loopback doubles, is
// killed, restarted on the same DATA_DIR, and every acknowledged event id must reach every
// double at least once. Then SIGTERM must drain and exit 0.
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createAccountService } from '../../src/accounts/account-service.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { startDestinationDouble, type DestinationDouble, type RecordedRequest } from '../helpers/destination-double.ts';
import { tempDir } from '../helpers/test-server.ts';
import { shippedFolderEnv } from '../helpers/shipped-folders.ts';
import { checkout, ROOT, SETTINGS } from './delivery-fixture.ts';

const TYPES = ['ga4', 'meta-capi', 'tiktok', 'webhook'] as const;

/** The event ids a double has received, read the way each platform carries them. */
function receivedIds(type: (typeof TYPES)[number], reqs: RecordedRequest[]): Set<string> {
  const ids = new Set<string>();
  for (const r of reqs) {
    if (type === 'webhook') ids.add(r.json<{ id: string }>().id);
    else if (type === 'ga4') for (const e of r.json<{ events: { params: { transaction_id: string } }[] }>().events) ids.add(e.params.transaction_id);
    else for (const e of r.json<{ data: { event_id: string }[] }>().data) ids.add(e.event_id);
  }
  return ids;
}

interface Server {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
}

function startServer(dataDir: string): Promise<Server> {
  const child = spawn(process.execPath, ['src/index.cjs'], {
    cwd: ROOT,
    env: { ...process.env, ...shippedFolderEnv(), DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ALLOW_PRIVATE_DESTINATIONS: '1', LOG_LEVEL: 'info', WORKERS: '1', DATABASE_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr}`)), 20_000);
    // Ready once delivery runs too: the server listens before its delivery thread is up, and
    // the kill must come while deliveries are under way.
    child.stdout!.on('data', (c: Buffer) => {
      buf += c.toString();
      const listening = buf.split('\n').find((line) => line.includes('tracklane listening'));
      if (listening === undefined || !buf.includes('"msg":"delivery started"')) return;
      clearTimeout(timer);
      resolve({ child, url: (JSON.parse(listening) as { url: string }).url, exited });
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code}) before listening: ${stderr}`)));
  });
}

describe('delivery: crash safety (kill -9 under load, restart)', function () {
  this.timeout(90_000);
  let dataDir: string;
  const doubles = new Map<string, DestinationDouble>();
  const children: ChildProcess[] = [];

  before(async () => {
    dataDir = tempDir('tl-crash-');
    for (const t of TYPES) {
      const d = await startDestinationDouble();
      d.otherwise(t === 'tiktok' ? { status: 200, body: { code: 0, message: 'OK' }, delayMs: 5 } : { status: 200, body: {}, delayMs: 5 });
      doubles.set(t, d);
    }
  });
  after(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const d of doubles.values()) await d.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('every acknowledged event reaches every destination after kill -9 and a restart', async () => {
    const store = openSqliteStore({ file: join(dataDir, 'tracklane.db') });
    const accounts = createAccountService(store);
    const { account, accessToken } = await accounts.create({ name: 'Crash shop', tier: 'FLEX', addon: true, country: 'RO' });
    await accounts.update(account.scriptId, { rateLimit: 100_000 });
    for (const t of TYPES) {
      await store.destinations.add({ id: `dst_crash${t.replace('-', '')}`.padEnd(20, '0').slice(0, 20), scriptId: account.scriptId, type: t, name: t, enabled: true, settings: SETTINGS[t](doubles.get(t)!.url) });
    }
    await store.close();

    const first = await startServer(dataDir);
    children.push(first.child);
    const acked = new Set<string>();
    let deliveredBeforeKill = 0;
    const TOTAL = 400;
    const KILL_AFTER = 150;
    let next = 0;
    let killed = false;
    const post = async (id: string) => {
      try {
        const res = await fetch(`${first.url}/webhooks/service/event?id=${account.scriptId}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-service-access-token': accessToken },
          // Shoppers repeat, so GA4 gets multi-event batches as well as single ones.
          body: JSON.stringify(checkout(id, { user: { id: `cust-${Number(id.slice(2)) % 7}`, email: `c${Number(id.slice(2)) % 7}@example.com` } })),
        });
        if (res.status === 200) acked.add(id);
        await res.arrayBuffer();
      } catch {
        // the connection died with the server: not acknowledged
      }
    };
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (next < TOTAL && !killed) {
        const id = `C-${next++}`;
        await post(id);
        // Kill once enough is acknowledged and deliveries are under way (or when the load ends).
        const delivering = doubles.get('webhook')!.requests.length >= 20;
        if (!killed && ((acked.size >= KILL_AFTER && delivering) || next >= TOTAL)) {
          killed = true;
          first.child.kill('SIGKILL');
        }
      }
    }));
    await first.exited;
    expect(killed).to.equal(true);
    deliveredBeforeKill = doubles.get('webhook')!.requests.length;
    if (process.env.CRASH_DEBUG) console.log('acked', acked.size, 'webhook requests before the kill', deliveredBeforeKill);
    expect(acked.size).to.be.at.least(KILL_AFTER);

    const second = await startServer(dataDir);
    children.push(second.child);
    const missing = () => TYPES.flatMap((t) => {
      const got = receivedIds(t, doubles.get(t)!.requests);
      return [...acked].filter((id) => !got.has(id)).map((id) => `${t}:${id}`);
    });
    const deadline = Date.now() + 45_000;
    while (missing().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(missing(), 'acknowledged events not delivered').to.deep.equal([]);
    expect(deliveredBeforeKill, 'the kill came while deliveries were under way').to.be.within(1, acked.size - 1);

    second.child.kill('SIGTERM');
    expect(await second.exited, 'SIGTERM drains and exits 0').to.equal(0);
  });
});
