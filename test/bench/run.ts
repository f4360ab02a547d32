// `npm run bench`: autocannon against the real server (spawned as its own process,
// real SQLite file) and a bare-Koa baseline in the same run; prints ratios.
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/open-store.ts';
import { createAccountService } from '../../src/accounts/account-service.ts';
import { createDestinationService } from '../../src/destinations/destination-service.ts';
import { loadPlugins } from '../../src/destinations/load-plugins.ts';

const FOUR_DESTINATIONS = {
  ga4: { measurement_id: 'G-BENCH1', api_secret: 'bench-secret' },
  'google-ads': { customer_id: '1234567890', developer_token: 'dev', access_token: 'tok', conversion_actions: { checkout_completed: '111' } },
  'meta-capi': { pixel_id: '123456', access_token: 'tok' },
  tiktok: { pixel_code: 'CBENCH', access_token: 'tok' },
};

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

const checkout = {
  event: { name: 'checkout_completed', id: 'ORD-1', value: 149.9, currency: 'EUR', properties: { channel: 'web' } },
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
};

function waitListening(child: ChildProcess, pattern: RegExp): Promise<number> {
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

interface Row { name: string; rps: number; p50: number; p99: number; errors: number; non2xx: number; rssMb: number }

async function load(name: string, url: string, headers: Record<string, string>, pid: number): Promise<Row> {
  const r = await autocannon({ url, method: 'POST', connections: CONNECTIONS, duration: DURATION, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(checkout) });
  const rss = Number((await import('node:fs')).readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)?.[1] ?? 0) / 1024;
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts, non2xx: r.non2xx, rssMb: Math.round(rss) };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const done = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await done;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tl-bench-'));
  const env = { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
  const store = await openStore(loadConfig(env));
  const accounts = createAccountService(store);
  const { account, accessToken } = await accounts.create({ name: 'Bench', tier: 'PRO', addon: true });
  // The bench measures throughput, not the per-account intake limit.
  await accounts.update(account.scriptId, { rateLimit: 1_000_000 });
  // A second account with four destinations, for endpoint 2's preview.
  const withDest = await accounts.create({ name: 'Bench 4 destinations', tier: 'PRO', addon: true, country: 'RO' });
  await accounts.update(withDest.account.scriptId, { rateLimit: 1_000_000 });
  const destinations = createDestinationService(store, await loadPlugins(join(process.cwd(), 'plugins')));
  for (const [type, config] of Object.entries(FOUR_DESTINATIONS)) await destinations.add(withDest.account.scriptId, type, config);
  await store.close();

  const rows: Row[] = [];
  const bare = spawn(process.execPath, ['--import', 'tsx', 'test/bench/bare-koa.ts'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const barePort = await waitListening(bare, /listening (\d+)/);
  rows.push(await load('bare Koa (baseline)', `http://127.0.0.1:${barePort}/`, {}, bare.pid!));
  await stop(bare);

  const server = spawn(process.execPath, ['--import', 'tsx', 'src/index.ts'], { env: { ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await waitListening(server, /"url":"http:\/\/[^:]+:(\d+)"/);
  server.stdout!.resume();
  const auth = { 'x-service-access-token': accessToken };
  rows.push(await load('endpoint 2 (validate, no storage)', `http://127.0.0.1:${port}/webhooks/service/event/test?id=${account.scriptId}`, auth, server.pid!));
  rows.push(await load('endpoint 1 (durable ack)', `http://127.0.0.1:${port}/webhooks/service/event?id=${account.scriptId}`, auth, server.pid!));
  rows.push(await load('endpoint 2 with 4 destinations (preview)', `http://127.0.0.1:${port}/webhooks/service/event/test?id=${withDest.account.scriptId}`,
    { 'x-service-access-token': withDest.accessToken }, server.pid!));
  await stop(server);
  rmSync(dataDir, { recursive: true, force: true });

  const base = rows[0];
  console.log(`\n${DURATION} s per run, ${CONNECTIONS} connections, ~${JSON.stringify(checkout).length} B checkout_completed body\n`);
  console.log('| run | req/s | ratio to bare | p50 ms | p99 ms | p99 ratio | errors | non-2xx | RSS MB |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(`| ${r.name} | ${Math.round(r.rps)} | ${(r.rps / base.rps).toFixed(2)} | ${r.p50} | ${r.p99} | ${(r.p99 / Math.max(base.p99, 1)).toFixed(2)} | ${r.errors} | ${r.non2xx} | ${r.rssMb} |`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
