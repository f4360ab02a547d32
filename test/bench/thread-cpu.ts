// `node --import tsx test/bench/thread-cpu.ts <run> [seconds] [rounds]`: the server's CPU per
// request, thread by thread (`main` is the HTTP thread; the others by thread id), read from /proc/<pid>/task/*/stat around a closed-loop load
// (50 connections, unique event ids), beside a bare-Koa process loaded the same way, in
// alternating rounds. CPU per request is steadier than req/s on a shared machine, and it says
// which thread a change moved. Runs: `plain` (endpoint 2, no destinations: validation only),
// `event` (endpoint 1, four destinations delivering), `test` (endpoint 2, four destinations).
import autocannon from 'autocannon';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { benchSetup, checkout, startServer, stop } from './payloads.ts';

const TYPES = ['ga4', 'meta-capi', 'tiktok', 'webhook'];
const run = process.argv[2] ?? 'plain';
const seconds = Number(process.argv[3] ?? 5);
const rounds = Number(process.argv[4] ?? 2);

/** CPU ticks (1/100 s) per thread, keyed by thread id, with the thread's name. */
function threadTicks(pid: number): Map<string, { name: string; ticks: number }> {
  const out = new Map<string, { name: string; ticks: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, { name: tid === String(pid) ? 'main' : name === 'node' ? `thread ${tid}` : name, ticks: Number(f[11]) + Number(f[12]) });
    } catch { /* the thread ended */ }
  }
  return out;
}

/** µs per request by thread name (threads of one name summed), from two readings. */
function perRequest(a: Map<string, { name: string; ticks: number }>, b: Map<string, { name: string; ticks: number }>, requests: number): Record<string, number> {
  const by: Record<string, number> = {};
  for (const [tid, t] of b) {
    const d = t.ticks - (a.get(tid)?.ticks ?? 0);
    by[t.name] = (by[t.name] ?? 0) + d;
  }
  const out: Record<string, number> = {};
  let total = 0;
  for (const [k, v] of Object.entries(by)) {
    if (v === 0) continue;
    out[k] = Math.round((v * 10_000) / requests);
    total += v;
  }
  out.TOTAL = Math.round((total * 10_000) / requests);
  return out;
}

/** RSS now and at its peak, and the thread count, from /proc. */
function memory(pid: number): string {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (key: string) => Math.round(Number(status.match(new RegExp(`${key}:\\s+(\\d+)`))?.[1] ?? 0) / 1024);
  return `RSS ${mb('VmRSS')} MB, peak ${mb('VmHWM')} MB, threads ${status.match(/Threads:\s+(\d+)/)?.[1]}`;
}

async function load(url: string, headers: Record<string, string>, pid: number, prefix: string): Promise<{ rps: number; p99: number; cpu: Record<string, number>; bench: number }> {
  let seq = 0;
  const before = threadTicks(pid);
  const me = process.cpuUsage();
  const r = await autocannon({
    url, connections: 50, duration: seconds,
    requests: [{ method: 'POST', headers: { 'content-type': 'application/json', ...headers }, setupRequest: (req) => ({ ...req, body: JSON.stringify(checkout(`${prefix}-${++seq}`)) }) }],
  });
  const used = process.cpuUsage(me);
  const n = r['2xx'] || 1;
  return { rps: Math.round(r.requests.average), p99: r.latency.p99, cpu: perRequest(before, threadTicks(pid), n), bench: Math.round((used.user + used.system) / n) };
}

async function main(): Promise<void> {
  const { dataDir, env, doubles, account } = await benchSetup('CPU', TYPES, run !== 'plain');
  const bare = spawn(process.execPath, ['--import', 'tsx', 'test/bench/bare-koa.ts'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const barePort = await new Promise<number>((res) => bare.stdout!.on('data', (d: Buffer) => { const m = String(d).match(/listening (\d+)/); if (m) res(Number(m[1])); }));
  const { child, port } = await startServer(env);
  console.log(`idle server: ${memory(child.pid!)}`);
  const path = run === 'event' ? 'event' : 'event/test';
  const url = `http://127.0.0.1:${port}/webhooks/service/${path}?id=${account.scriptId}`;
  const headers = { 'x-service-access-token': account.accessToken };
  await load(url, headers, child.pid!, 'warm'); // JIT, caches, pools
  for (let i = 0; i < rounds; i++) {
    const b = await load(`http://127.0.0.1:${barePort}/`, {}, bare.pid!, `bare${i}`);
    const s = await load(url, headers, child.pid!, `r${i}`);
    console.log(`bare Koa ${b.rps} req/s, ${b.cpu.TOTAL} µs/req (load generator ${b.bench} µs/req)`);
    console.log(memory(child.pid!));
    console.log(`${run} ${s.rps} req/s (${(s.rps / b.rps).toFixed(2)}x), p99 ${s.p99} ms, load generator ${s.bench} µs/req; server µs/req: ${JSON.stringify(s.cpu)}`);
  }
  await stop(child);
  await stop(bare);
  for (const d of doubles.values()) await d.close();
  rmSync(dataDir, { recursive: true, force: true });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
