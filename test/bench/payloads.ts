// What every bench run shares: the ~1 KB checkout_completed body (its own event id each
// time), the count of native events a destination double received, and starting the server.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/open-store.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { createAccountService } from '../../src/accounts/account-service.ts';
import type { Store } from '../../src/store/types.ts';
import { SETTINGS } from '../delivery/delivery-fixture.ts';
import { CURRENT_ROOT, serverArgsOf, type Side } from './reference.ts';

/**
 * The node arguments of `npm start` (package.json's start script without `exec node`), so the
 * benches run the server exactly as users do, flags included.
 */
export const SERVER_ARGS: readonly string[] = serverArgsOf(CURRENT_ROOT);

/** CPU seconds a process has used so far, every thread (user + system; Linux clock ticks are 1/100 s). */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** A process's peak RSS so far, in MB (VmHWM). */
export function peakRssMb(pid: number): number {
  return Math.round(Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmHWM:\s+(\d+)/)?.[1] ?? 0) / 1024);
}

export const checkout = (id: string) => ({
  event: { name: 'checkout_completed', id, value: 149.9, currency: 'EUR', properties: { channel: 'web' } },
  context: { environment: 'prod', data_source: 'website', url: 'https://shop.example/checkout/done', user_agent: 'Mozilla/5.0', overide_ip: '2001:db8::1' },
  products: [
    { id: 'SKU-1', name: 'Trail shoe', category: 'Shoes', price_base: 120, price: 99.9, tax_percent: 19, quantity: 1, brand: 'Acme' },
    { id: 'SKU-2', name: 'Socks', category: 'Accessories', price_base: 12.5, price: 10, tax_percent: 19, quantity: 2, stock_status: 'in stock' },
  ],
  shipping: [{ name: 'Courier', value: 15, tax_percent: 19 }],
  payments: [{ name: 'Card', value: 149.9, type: 'card' }],
  user: { id: 'U-1', email: 'jane.doe@example.com', phone: '+40 722 123 456', first_name: 'Jane', last_name: 'Doe', country: 'RO', city: 'Cluj' },
  consent: { analytics: true, personalization: true, marketing: true },
  cookies: [{ name: '_ga', value: 'GA1.1.123456789.1700000000' }, { name: '_fbp', value: 'fb.1.1700000000000.123' }],
});

const counted = new WeakMap<object, number>();
/** Native events a double has received so far (batch platforms carry several per request); each body is parsed once. */
export function nativeEvents(type: string, d: DestinationDouble): number {
  if (type === 'webhook') return d.requests.length;
  let n = 0;
  for (const r of d.requests) {
    let c = counted.get(r);
    if (c === undefined) {
      const body = r.json<{ events?: unknown[]; data?: unknown[] }>();
      c = (body.events ?? body.data ?? []).length;
      counted.set(r, c);
    }
    n += c;
  }
  return n;
}

/** SIGTERM, then resolves once the process has exited. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const done = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await done;
}

/** Resolves with the port once `child`'s stdout matches `pattern` (its first group the port); rejects if it exits first. */
export function waitListening(child: ChildProcess, pattern: RegExp): Promise<number> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString();
      const m = buf.match(pattern);
      if (m) {
        child.stdout!.off('data', onData);
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${buf}`)));
  });
}

/** One loopback double per destination type, each answering as its platform does on success. */
export async function startDoubles(types: readonly string[]): Promise<Map<string, DestinationDouble>> {
  const doubles = new Map<string, DestinationDouble>();
  for (const t of types) {
    const d = await startDestinationDouble();
    d.otherwise(t === 'tiktok' ? { status: 200, body: { code: 0, message: 'OK' } } : { status: 200, body: {} });
    doubles.set(t, d);
  }
  return doubles;
}

/**
 * Spawns the server as `npm start` does (its flags, `src/index.cjs`) with `env` (PORT 0,
 * LOG_LEVEL info) and resolves with the port it listens on; `side`: in that checkout (a
 * reference build) instead of this tree.
 */
export function startServer(env: NodeJS.ProcessEnv, side?: Side): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [...(side?.serverArgs ?? SERVER_ARGS)], { env, cwd: side?.root ?? CURRENT_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d;
      const m = buf.match(/"url":"http:\/\/[^:]+:(\d+)".*tracklane listening/);
      if (m) {
        child.stdout!.removeAllListeners('data');
        child.stdout!.resume();
        resolve({ child, port: Number(m[1]) });
      }
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${buf}`)));
  });
}

/**
 * An account for a bench run on an open store: PRO with the add-on, its rate limit out of
 * the way (the bench measures throughput, not the limit), and one destination per double
 * given, of that double's type.
 */
export async function benchAccount(
  store: Store, name: string, opts: { doubles?: ReadonlyMap<string, DestinationDouble>; country?: string } = {},
): Promise<{ scriptId: string; accessToken: string }> {
  const accounts = createAccountService(store);
  const { account, accessToken } = await accounts.create({ name, tier: 'PRO', addon: true, country: opts.country ?? null });
  await accounts.update(account.scriptId, { rateLimit: 1_000_000 });
  for (const [type, double] of opts.doubles ?? []) {
    await store.destinations.add({
      id: `dst_${randomBytes(8).toString('hex')}`, scriptId: account.scriptId, type, name: type, enabled: true, settings: SETTINGS[type](double.url),
    });
  }
  return { scriptId: account.scriptId, accessToken };
}

/**
 * What a one-server bench tool starts from: a fresh data directory, the server's environment
 * (port 0, loopback destinations allowed, info logs), one double per destination type and an
 * account with one destination per double, or none.
 */
export async function benchSetup(name: string, types: readonly string[], withDestinations: boolean): Promise<{
  dataDir: string; env: NodeJS.ProcessEnv; doubles: Map<string, DestinationDouble>; account: { scriptId: string; accessToken: string };
}> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tl-bench-'));
  const env = { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ALLOW_PRIVATE_DESTINATIONS: '1' };
  const doubles = await startDoubles(types);
  const store = await openStore(loadConfig(env));
  const account = await benchAccount(store, name, withDestinations ? { doubles, country: 'RO' } : {});
  await store.close();
  return { dataDir, env, doubles, account };
}

/**
 * What a SQLite store still has to deliver: events queued for fan-out, accepted events after
 * the fan-out cursor (migration 22: no queue row each) and pending deliveries.
 */
export const SQLITE_OPEN_WORK_SQL = `SELECT (SELECT count(*) FROM dispatch_queue) + (SELECT count(*) FROM deliveries WHERE status = 'pending')
  + (SELECT count(*) FROM events WHERE status = 'accepted' AND seq > (SELECT cursor_seq FROM fanout_cursors)) AS n`;
