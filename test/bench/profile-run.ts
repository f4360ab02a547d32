// `node --import tsx test/bench/profile-run.ts <run> [seconds]`: starts the real server
// under `node --cpu-prof` (profile written to ./profiles/), loads it with one of the
// bench's runs, stops it, and prints the hottest functions by self time. Runs: `event`
// (endpoint 1), `test` (endpoint 2 with four destinations), `plain` (endpoint 2, an account
// without destinations: validation only), `batch20`, `batch100`.
// Four loopback destinations are connected and delivering in every run.
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { benchSetup, checkout, SERVER_ARGS } from './payloads.ts';

const TYPES = ['ga4', 'meta-capi', 'tiktok', 'webhook'];
const run = process.argv[2] ?? 'batch100';
const seconds = Number(process.argv[3] ?? 10);

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number }

function hottest(file: string, top = 30): string[] {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[] };
  const self = new Map<string, number>();
  let total = 0;
  for (const n of prof.nodes) {
    const hits = n.hitCount ?? 0;
    total += hits;
    const url = n.callFrame.url.replace(/^.*\/(node_modules\/|src\/|plugins\/)/, '$1');
    const key = `${n.callFrame.functionName || '(anonymous)'} ${url}:${n.callFrame.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + hits);
  }
  return [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => `${((v / total) * 100).toFixed(1).padStart(5)} %  ${k}`);
}

async function main(): Promise<void> {
  const profDir = resolve('profiles');
  mkdirSync(profDir, { recursive: true });
  const { dataDir, env, doubles, account } = await benchSetup('Profile', TYPES, run !== 'plain');
  const { accessToken } = account;
  const before = new Set(readdirSync(profDir));
  const server: ChildProcess = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${profDir}`, ...SERVER_ARGS], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((res) => {
    let buf = '';
    server.stdout!.on('data', (d: Buffer) => {
      buf += d;
      const m = buf.match(/"url":"http:\/\/[^:]+:(\d+)"/);
      if (m) res(Number(m[1]));
    });
  });
  const batch = run.startsWith('batch') ? Number(run.slice(5)) : 0;
  const path = batch ? 'events' : run === 'test' || run === 'plain' ? 'event/test' : 'event';
  let seq = 0;
  const r = await autocannon({
    url: `http://127.0.0.1:${port}/webhooks/service/${path}?id=${account.scriptId}`,
    connections: batch ? 4 : 50, duration: seconds,
    requests: [{
      method: 'POST', headers: { 'content-type': 'application/json', 'x-service-access-token': accessToken },
      setupRequest: (req) => ({ ...req, body: JSON.stringify(batch ? { batch: Array.from({ length: batch }, () => checkout(`p-${++seq}`)) } : checkout(`p-${++seq}`)) }),
    }],
  });
  console.log(`${run}: ${Math.round(r.requests.average)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, non-2xx ${r.non2xx}`);
  const exited = new Promise((res) => server.once('exit', res));
  server.kill('SIGTERM');
  await exited;
  for (const d of doubles.values()) await d.close();
  rmSync(dataDir, { recursive: true, force: true });
  // One profile per thread: the main (HTTP) thread, the delivery thread, pool threads.
  const files = readdirSync(profDir).filter((f) => !before.has(f) && f.endsWith('.cpuprofile'));
  if (files.length === 0) throw new Error('no profile written');
  for (const file of files) console.log(`\nprofile: profiles/${file}\n${hottest(join(profDir, file), 25).join('\n')}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
