// Delivery throughput: N accepted events for an account with four destinations (ga4,
// meta-capi, tiktok, webhook) on loopback doubles. Mode `backlog` stores the events first and
// times the real server (spawned) draining them; mode `live` times intake + delivery together.
// Run: node --import tsx test/delivery/bench-delivery.ts [events=5000] [backlog|live]
// A second line says which way the deliveries went: rows per destination type, and those
// delivered without a row (listed on their attempt).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Pool } from 'undici';
import { createAccountService } from '../../src/accounts/account-service.ts';
import { SPEC_EVENT_NAMES } from '../../src/accounts/types.ts';
import { validateEvent } from '../../src/schema/validate-event.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { startDestinationDouble, type DestinationDouble } from '../helpers/destination-double.ts';
import { tempDir } from '../helpers/test-server.ts';
import { checkout, ROOT, SETTINGS } from './delivery-fixture.ts';
import { cpuSeconds, peakRssMb, SERVER_ARGS } from '../bench/payloads.ts';

const N = Number(process.argv[2] ?? 5000);
const MODE = process.argv[3] ?? 'backlog';
const TYPES = ['ga4', 'meta-capi', 'tiktok', 'webhook'];

/** Native events a double has received (each request parsed once). */
const counted = new Map<string, { seen: number; events: number }>();
const count = (type: string, d: DestinationDouble): number => {
  const c = counted.get(type) ?? { seen: 0, events: 0 };
  for (; c.seen < d.requests.length; c.seen++) {
    const r = d.requests[c.seen];
    if (type === 'webhook') c.events++;
    else {
      const body = r.json<{ events?: unknown[]; data?: unknown[] }>();
      c.events += (body.events ?? body.data ?? []).length;
    }
  }
  counted.set(type, c);
  return c.events;
};

const dataDir = tempDir('tl-bench-');
const doubles = new Map<string, DestinationDouble>();
for (const t of TYPES) {
  const d = await startDestinationDouble();
  d.otherwise(t === 'tiktok' ? { status: 200, body: { code: 0, message: 'OK' } } : { status: 200, body: {} });
  doubles.set(t, d);
}
const store = openSqliteStore({ file: join(dataDir, 'tracklane.db') });
const accounts = createAccountService(store);
const { account, accessToken } = await accounts.create({ name: 'Bench', tier: 'FLEX', addon: true, country: 'RO' });
await accounts.update(account.scriptId, { rateLimit: 1_000_000 });
for (const t of TYPES) {
  await store.destinations.add({ id: `dst_bench${t.replace('-', '')}`.padEnd(20, '0').slice(0, 20), scriptId: account.scriptId, type: t, name: t, enabled: true, settings: SETTINGS[t](doubles.get(t)!.url) });
}
const payload = (i: number) => checkout(`E-${i}`, { user: { id: `u-${i % 50}`, email: `u${i % 50}@example.com` } });
if (MODE === 'backlog') {
  const ctx = { approvedEvents: new Set(SPEC_EVENT_NAMES), defaultTaxRate: 19, host: null };
  for (let i = 0; i < N; i += 500) {
    await store.events.append(Array.from({ length: Math.min(500, N - i) }, (_, j) => {
      const p = payload(i + j);
      return {
        id: randomUUID(), scriptId: account.scriptId, name: 'checkout_completed', eventId: `E-${i + j}`, status: 'accepted' as const,
        source: 'event', requestId: 'bench', receivedAt: Date.now(), errors: [], warnings: [], payload: validateEvent(p, ctx).event,
      };
    }));
  }
}
await store.close();

// The server as `npm start` runs it (its node flags read from package.json).
const child = spawn(process.execPath, [...(process.env.BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] : []), ...SERVER_ARGS], {
  cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', ALLOW_PRIVATE_DESTINATIONS: '1', LOG_LEVEL: 'info' },
});
const url = await new Promise<string>((resolve) => {
  let buf = '';
  child.stdout!.on('data', (c: Buffer) => {
    buf += c.toString();
    const line = buf.split('\n').find((l) => l.includes('tracklane listening'));
    if (line) resolve((JSON.parse(line) as { url: string }).url);
  });
});

const start = performance.now();
let ackedAt = start;
if (MODE === 'live') {
  const pool = new Pool(url, { connections: 50 });
  let next = 0;
  await Promise.all(Array.from({ length: 50 }, async () => {
    while (next < N) {
      const i = next++;
      const res = await pool.request({
        path: `/webhooks/service/event?id=${account.scriptId}`, method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-access-token': accessToken }, body: JSON.stringify(payload(i)),
      });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`intake answered ${res.statusCode}`);
    }
  }));
  ackedAt = performance.now();
  await pool.close();
}
const expected = N * TYPES.length;
for (;;) {
  const got = TYPES.reduce((n, t) => n + count(t, doubles.get(t)!), 0);
  if (got >= expected) break;
  await new Promise((r) => setTimeout(r, 50));
}
const seconds = (performance.now() - start) / 1000;
const requests = TYPES.map((t) => `${t} ${doubles.get(t)!.requests.length}`).join(', ');
console.log(JSON.stringify({
  mode: MODE, events: N, native_events: expected, seconds: Number(seconds.toFixed(2)),
  native_events_per_s: Math.round(expected / seconds),
  ...(MODE === 'live' ? { intake_seconds: Number(((ackedAt - start) / 1000).toFixed(2)) } : {}),
  requests,
  // CPU seconds of the server process (every thread), from its start.
  server_cpu_s: cpuSeconds(child.pid!),
  peak_rss_mb: peakRssMb(child.pid!),
}));
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
// Which way the deliveries went: a row each (stored, claimed back or stored while in flight), or
// listed on the attempt that delivered them (handed off, no row; fan-out-loop.ts keeps the pace for it).
const db = new Database(join(dataDir, 'tracklane.db'), { readonly: true });
const rows = db.prepare<[], { destination_type: string; n: number }>('SELECT destination_type, count(*) AS n FROM deliveries GROUP BY 1').all();
const listed = db.prepare<[], { n: number | null }>('SELECT sum(json_array_length(delivered)) AS n FROM delivery_attempts WHERE delivered IS NOT NULL').get()!.n ?? 0;
db.close();
console.log(JSON.stringify({ delivery_rows: Object.fromEntries(rows.map((r) => [r.destination_type, r.n])), delivered_without_row: listed }));
for (const d of doubles.values()) await d.close();
rmSync(dataDir, { recursive: true, force: true });
