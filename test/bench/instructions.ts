// `node --import tsx test/bench/instructions.ts <run> [requests]`: the real server under
// valgrind's callgrind, counting the machine instructions each request costs on the HTTP
// thread and in all. Wall-clock and CPU-time figures on this shared machine move by tens of
// per cent from one minute to the next; instruction counts of the same code and load have
// repeated within 0.3–5 % (JIT and collector timing), so a change of several per cent shows in
// two or three pairs of runs.
//
// Instrumentation is off while the server starts and while 1,000 warm-up requests settle the
// JIT and the caches (WARM to change), then on for `requests` (default 300), sent by 8
// keep-alive clients in this process (not counted). Runs: `plain` (endpoint 2, an account
// without destinations: HTTP, authentication, validation, the answer) and `test` (endpoint 2
// with four destinations: the whole preview pipeline). Both are synchronous on the HTTP
// thread; `bare` is the bare-Koa baseline of `npm run bench` (koa-bodyparser and a fixed
// answer), loaded the same way. Endpoint 1's work continues on other threads at times that vary, so it is left to
// thread-cpu.ts. Needs valgrind (Debian's package); takes about a minute per run.
// Only user-space instructions are counted: what a change saves in system calls does not show.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { benchSetup, checkout, SERVER_ARGS } from './payloads.ts';
import { instructionsByThread } from './callgrind.ts';

const TYPES = ['ga4', 'meta-capi', 'tiktok', 'webhook'];
const run = process.argv[2] ?? 'plain';
if (!['plain', 'test', 'bare'].includes(run)) throw new Error(`unknown run ${run}: plain, test or bare`);
const N = Number(process.argv[3] ?? 300);
const WARM = Number(process.env.WARM ?? 1000);
const CLIENTS = 8;

const outDir = mkdtempSync(join(tmpdir(), 'tl-callgrind-'));
const { dataDir, env, doubles, account } = await benchSetup('Instructions', TYPES, run === 'test');

const server = spawn('valgrind', ['--tool=callgrind', '--separate-threads=yes', '--instr-atstart=no', `--callgrind-out-file=${outDir}/cg.%p`,
  process.execPath, ...(run === 'bare' ? ['--import', 'tsx', 'test/bench/bare-koa.ts'] : SERVER_ARGS)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
const port = await new Promise<number>((resolve, reject) => {
  let buf = '';
  server.stdout!.on('data', (d: Buffer) => {
    buf += d;
    const m = buf.match(/"url":"http:\/\/[^:]+:(\d+)".*tracklane listening/) ?? buf.match(/^listening (\d+)/m);
    if (m) resolve(Number(m[1]));
  });
  server.once('exit', (code) => reject(new Error(`server under valgrind exited with ${code}`)));
});
server.stdout!.resume();
server.stderr!.resume();
// callgrind_control finds the process by names that carry the environment's USER and HOST: the server's.
const control = (...args: string[]) => execFileSync('callgrind_control', [...args, String(server.pid)], { env, stdio: 'ignore' });

const pool = new Pool(`http://127.0.0.1:${port}`, { connections: CLIENTS });
const path = run === 'bare' ? '/' : `/webhooks/service/event/test?id=${account.scriptId}`;
let seq = 0;
async function send(n: number): Promise<void> {
  let sent = 0;
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (sent++ < n) {
      const r = await pool.request({
        path, method: 'POST', headers: { 'content-type': 'application/json', 'x-service-access-token': account.accessToken },
        body: JSON.stringify(checkout(`instr-${++seq}`)),
      });
      await r.body.text();
      if (r.statusCode !== 200) throw new Error(`answered ${r.statusCode}`);
    }
  }));
}

await send(WARM);
control('--instr=on');
control('--zero');
await send(N);
control('--instr=off');
control('--dump');
server.kill('SIGKILL');
await new Promise((r) => server.once('exit', r));
await pool.close();
for (const d of doubles.values()) await d.close();

// One file per thread: `thread: 1` is the main (HTTP) thread.
const byThread = instructionsByThread(outDir);
rmSync(dataDir, { recursive: true, force: true });
rmSync(outDir, { recursive: true, force: true });
const k = (n: number) => Math.round(n / N / 1000);
const all = [...byThread.values()].reduce((a, b) => a + b, 0);
console.log(`${run}: HTTP thread ${k(byThread.get(1) ?? 0)}k instructions per request; all threads ${k(all)}k ` +
  `(the others are mostly V8's background compiler and collector, which vary from run to run)`);
