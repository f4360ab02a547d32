// `node --import tsx test/bench/cluster.ts [--json FILE]`: endpoint-1 intake and end-to-end
// delivery with one SQLite instance, one PostgreSQL instance and two PostgreSQL instances,
// in one run on this machine. Each configuration gets a fresh database, an account with four
// destinations (ga4, meta-capi, tiktok, webhook) on loopback doubles, unique event ids, and
// BENCH_CONNECTIONS (50) connections split evenly over its instances.
import autocannon from 'autocannon';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { DestinationDouble } from '../helpers/destination-double.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { benchAccount, checkout, nativeEvents, startDoubles, startServer, stop } from './payloads.ts';

const TYPES = ['ga4', 'meta-capi', 'tiktok', 'webhook'];
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

interface Result {
  name: string; instances: number; accepted: number; rps: number; p50: number; p99: number; e2eSeconds: number; e2eEventsPerSecond: number;
  /** Deliveries each instance's lanes settled (tracklane_deliveries_total): with handoffs, mostly what its own fan-out mapped. */
  perInstance: number[];
}

/** The sum of an instance's tracklane_deliveries_total series. */
async function deliveriesOf(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith('tracklane_deliveries_total{')).reduce((n, l) => n + Number(l.split(' ').pop()), 0);
}

async function measure(name: string, instances: number, pg: boolean): Promise<Result> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tl-cluster-'));
  let db: TestDatabase | undefined;
  if (pg) db = await createTestDatabase();
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ALLOW_PRIVATE_DESTINATIONS: '1', DATABASE_URL: db?.url ?? '' };
  const doubles = await startDoubles(TYPES);
  const store = await openStore(loadConfig(env));
  const { scriptId, accessToken } = await benchAccount(store, 'Bench', { doubles, country: 'RO' });
  await store.close();
  const servers = [];
  for (let i = 0; i < instances; i++) servers.push(await startServer(env));
  let seq = 0;
  const started = performance.now();
  const runs = await Promise.all(servers.map((s) => autocannon({
    url: `http://127.0.0.1:${s.port}/webhooks/service/event?id=${scriptId}`,
    connections: Math.max(1, Math.floor(CONNECTIONS / instances)), duration: DURATION,
    requests: [{ method: 'POST', headers: { 'content-type': 'application/json', 'x-service-access-token': accessToken }, setupRequest: (req) => ({ ...req, body: JSON.stringify(checkout(`${name}-${++seq}`)) }) }],
  })));
  const accepted = runs.reduce((n, r) => n + r['2xx'], 0);
  const expected = accepted * TYPES.length;
  const deadline = Date.now() + 300_000;
  let delivered = 0;
  while (Date.now() < deadline) {
    delivered = TYPES.reduce((n, t) => n + nativeEvents(t, doubles.get(t)!), 0);
    if (delivered >= expected) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const e2eSeconds = (performance.now() - started) / 1000;
  const perInstance = await Promise.all(servers.map((s) => deliveriesOf(s.port).catch(() => NaN)));
  for (const s of servers) await stop(s.child);
  for (const d of doubles.values()) await d.close();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
  return {
    name, instances, accepted, rps: Math.round(runs.reduce((n, r) => n + r.requests.average, 0)),
    p50: Math.max(...runs.map((r) => r.latency.p50)), p99: Math.max(...runs.map((r) => r.latency.p99)),
    e2eSeconds: Math.round(e2eSeconds * 10) / 10, e2eEventsPerSecond: Math.round(delivered / TYPES.length / e2eSeconds), perInstance,
  };
}

async function main(): Promise<void> {
  const results = [
    await measure('SQLite, 1 instance', 1, false),
    await measure('PostgreSQL, 1 instance', 1, true),
    await measure('PostgreSQL, 2 instances', 2, true),
  ];
  const base = results[0];
  console.log(`\n${DURATION} s of endpoint-1 load, ${CONNECTIONS} connections split over the instances, unique event ids, 4 destinations delivering\n`);
  console.log('| configuration | intake req/s | ratio to SQLite | p50 ms | p99 ms | accepted | all delivered after s | end-to-end events/s | ratio to SQLite |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    console.log(`| ${r.name} | ${r.rps} | ${(r.rps / base.rps).toFixed(2)} | ${r.p50} | ${r.p99} | ${r.accepted} | ${r.e2eSeconds} | ${r.e2eEventsPerSecond} | ${(r.e2eEventsPerSecond / base.e2eEventsPerSecond).toFixed(2)} |`);
  }
  for (const r of results) if (r.instances > 1) console.log(`\n${r.name}: deliveries settled per instance (tracklane_deliveries_total): ${r.perInstance.join(', ')}`);
  const at = process.argv.indexOf('--json');
  if (at !== -1 && process.argv[at + 1]) writeFileSync(process.argv[at + 1], `${JSON.stringify({ duration_s: DURATION, connections: CONNECTIONS, results }, null, 2)}\n`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
