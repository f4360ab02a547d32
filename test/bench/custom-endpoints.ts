// p50/p99 of each demo custom endpoint: autocannon against the real server (its own
// process, real SQLite file), example.json as the body, the endpoint's real auth. The
// demo folder is copied with its rate limits lifted, so the run measures the work, not 429s.
// Run: node --import tsx test/bench/custom-endpoints.ts   (BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_ENVS)
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignJWT } from 'jose';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/open-store.ts';
import { SERVER_ARGS } from './payloads.ts';
import { createAccountService } from '../../src/accounts/account-service.ts';
import { readEndpointPlan } from '../../src/customers/endpoint-versions.ts';
import { rebaseImports } from '../../src/customers/new-version.ts';

/** The current version's example.json of an endpoint folder (versions/<n>/ or the folder itself). */
function currentExample(folder: string): string {
  const plan = readEndpointPlan(folder);
  if (typeof plan === 'string') throw new Error(`${folder}: ${plan}`);
  return join(plan.versions.find((v) => v.version === plan.current)!.dir, 'example.json');
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ENVS = (process.env.BENCH_ENVS ?? 'production,test').split(',');

/** demo/ copied out of the tree: rate limits lifted, every version's handler imports pointed back at src/. */
function benchCustomers(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tl-bench-customers-'));
  cpSync(join(ROOT, 'customers/demo'), join(dir, 'demo'), { recursive: true, filter: (f) => !f.endsWith('.test.ts') });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  for (const ep of readdirSync(join(dir, 'demo/endpoints'))) {
    const folder = join(dir, 'demo/endpoints', ep);
    const cfg = JSON.parse(readFileSync(join(folder, 'endpoint.json'), 'utf8'));
    cfg.rate_limit = { production: { per_minute: 10_000_000 }, test: { per_minute: 10_000_000 } };
    writeFileSync(join(folder, 'endpoint.json'), JSON.stringify(cfg));
    const plan = readEndpointPlan(folder);
    if (typeof plan === 'string') throw new Error(`${folder}: ${plan}`);
    for (const v of plan.versions) {
      const original = join(ROOT, 'customers/demo/endpoints', ep, v.dir.slice(folder.length));
      writeFileSync(join(v.dir, 'handler.ts'), rebaseImports(readFileSync(join(v.dir, 'handler.ts'), 'utf8'), original, v.dir));
    }
  }
  return dir;
}

async function authFor(endpoint: string, body: string): Promise<Record<string, string>> {
  switch (endpoint) {
    case 'order-sync':
      return { 'x-api-key': 'demo_order_sync_key_3f9a1c7e52b84d06' };
    case 'patient-interaction': {
      const jwt = await new SignJWT({ sub: 'bench' }).setProtectedHeader({ alg: 'HS256' })
        .setIssuer('https://crm.demo-clinic.example').setAudience('tracklane:demo:patient-interaction')
        .setIssuedAt().setExpirationTime('10m').sign(new TextEncoder().encode('demo-only-hs256-secret-patient-interaction-7c1e'));
      return { authorization: `Bearer ${jwt}` };
    }
    case 'transaction-analytics': {
      // The window is 300 s: one signature covers a run.
      const ts = Math.floor(Date.now() / 1000);
      const sig = createHmac('sha256', 'demo-only-hmac-secret-transaction-analytics-51d0').update(`${ts}.${body}`).digest('hex');
      return { 'x-signature': sig, 'x-signature-timestamp': String(ts) };
    }
    default:
      return {};
  }
}

function waitListening(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString();
      const m = buf.match(/"url":"http:\/\/[^:]+:(\d+)"/);
      if (m) {
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${buf}`)));
  });
}

interface Row { endpoint: string; env: string; rps: number; p50: number; p90: number; p99: number; max: number; non2xx: number; errors: number }

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tl-bench-'));
  const customersDir = benchCustomers();
  const env = { ...process.env, DATA_DIR: dataDir, CUSTOMERS_DIR: customersDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
  const store = await openStore(loadConfig(env));
  const accounts = createAccountService(store);
  const { account, accessToken } = await accounts.create({ name: 'Bench', tier: 'CUSTOM' });
  await accounts.update(account.scriptId, { customer: 'demo', approveEvents: ['order_delivered'] });
  await store.close();

  const server = spawn(process.execPath, [...SERVER_ARGS], { cwd: ROOT, env: { ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] });
  const rows: Row[] = [];
  try {
    const port = await waitListening(server);
    for (const endpoint of readdirSync(join(customersDir, 'demo/endpoints')).sort()) {
      const body = readFileSync(currentExample(join(customersDir, 'demo/endpoints', endpoint)), 'utf8');
      for (const e of ENVS) {
        const headers = { 'content-type': 'application/json', 'x-service-access-token': accessToken, ...(await authFor(endpoint, body)) };
        const url = `http://127.0.0.1:${port}/service/custom/${endpoint}?id=${account.scriptId}&env=${e}`;
        const probe = await fetch(url, { method: 'POST', headers, body });
        if (probe.status !== 200) throw new Error(`${endpoint} ${e}: ${probe.status} ${await probe.text()}`);
        const r = await autocannon({ url, method: 'POST', connections: CONNECTIONS, duration: DURATION, headers, body });
        rows.push({ endpoint, env: e, rps: r.requests.average, p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max, non2xx: r.non2xx, errors: r.errors + r.timeouts });
      }
    }
  } finally {
    if (server.exitCode === null) {
      const done = new Promise((r) => server.once('exit', r));
      server.kill('SIGTERM');
      await done;
    }
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(customersDir, { recursive: true, force: true });
  }

  const bodySize = (ep: string) => readFileSync(currentExample(join(ROOT, 'customers/demo/endpoints', ep))).length;
  console.log(`\n${DURATION} s per run, ${CONNECTIONS} connections, example.json as the body, real auth, one CUSTOM account\n`);
  console.log('| endpoint | env | body B | req/s | p50 ms | p90 ms | p99 ms | max ms | non-2xx | errors |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(`| ${r.endpoint} | ${r.env} | ${bodySize(r.endpoint)} | ${Math.round(r.rps)} | ${r.p50} | ${r.p90} | ${r.p99} | ${r.max} | ${r.non2xx} | ${r.errors} |`);
  }
  const worst = Math.max(...rows.map((r) => r.p99));
  console.log(`\nworst p99: ${worst} ms (standard: under 500 ms)`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
