// `node --import tsx test/bench/instructions.ts <run> [requests] [--root DIR]`: the real server
// under valgrind's callgrind, counting the machine instructions each request costs on the HTTP
// thread and in all. Wall-clock and CPU-time figures on this shared machine move by tens of
// per cent from one minute to the next; instruction counts of the same code and load have
// repeated within 0.3–5 % (JIT and collector timing), so a change of several per cent shows in
// two or three pairs of runs.
//
// Instrumentation is off while the server starts and while 1,000 warm-up requests settle the
// JIT and the caches (WARM to change), then on for `requests` (default 300), sent by 8
// keep-alive clients in this process (not counted). Runs: `plain` (endpoint 2, an account
// without destinations: HTTP, authentication, validation, the answer), `test` (endpoint 2
// with four destinations: the whole preview pipeline), `ga4` (endpoint 2 with GA4 only),
// `event` (endpoint 1, an account without destinations: the HTTP thread's part and the
// writer thread's durable commit, nothing to deliver) and `event4` (endpoint 1 with four
// destinations delivering: the delivery thread's share varies with how far it keeps up).
// Endpoint 2 is synchronous on the HTTP thread; `bare` is the bare-Koa baseline of `npm run
// bench` (koa-bodyparser and a fixed answer), loaded the same way. `--root DIR` runs the
// server of another checkout (a reference build: `git worktree add DIR <commit>` with this
// tree's node_modules linked in), its accounts made by its own code (side-setup.ts), so two
// commits can be counted alternately. Needs valgrind (Debian's package); takes about a minute
// per run. Only user-space instructions are counted: what a change saves in system calls does
// not show.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Pool } from 'undici';
import { checkout, startDoubles } from './payloads.ts';
import { CURRENT_ROOT, serverArgsOf, sideSetup } from './reference.ts';

const RUNS: Record<string, { types: string[]; path: string }> = {
  plain: { types: [], path: 'event/test' },
  test: { types: ['ga4', 'meta-capi', 'tiktok', 'webhook'], path: 'event/test' },
  ga4: { types: ['ga4'], path: 'event/test' },
  event: { types: [], path: 'event' },
  event4: { types: ['ga4', 'meta-capi', 'tiktok', 'webhook'], path: 'event' },
  bare: { types: [], path: '' },
};
const args = process.argv.slice(2);
const rootAt = args.indexOf('--root');
const root = rootAt === -1 ? CURRENT_ROOT : resolve(args.splice(rootAt, 2)[1]);
const run = args[0] ?? 'plain';
if (!(run in RUNS)) throw new Error(`unknown run ${run}: ${Object.keys(RUNS).join(', ')}`);
const { types, path: route } = RUNS[run];
const N = Number(args[1] ?? 300);
const WARM = Number(process.env.WARM ?? 1000);
const CLIENTS = 8;
/**
 * INSTR_SINGLE_THREADED=1: V8's compilers and collector on the thread they serve
 * (`--single-threaded`), so when optimised code arrives no longer depends on how busy the
 * machine's cores are: at load 12–25, runs of one tree with the background compilers
 * differed by 10 % and more. The counts then include compiling and collecting.
 */
const NODE_FLAGS = process.env.INSTR_SINGLE_THREADED === '1' ? ['--single-threaded'] : [];

const outDir = mkdtempSync(join(tmpdir(), 'tl-callgrind-'));
const dataDir = mkdtempSync(join(tmpdir(), 'tl-bench-'));
const env = { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ALLOW_PRIVATE_DESTINATIONS: '1',
  // A server under valgrind at a busy hour can take seconds over the first requests' headers.
  HEADERS_TIMEOUT_MS: '120000' };
const doubles = await startDoubles(types);
const [account] = await sideSetup<{ scriptId: string; accessToken: string }[]>({ name: 'reference', root, label: root, serverArgs: [] }, {
  task: 'accounts', env, accounts: [{ name: 'Instructions', doubles: Object.fromEntries([...doubles].map(([t, d]) => [t, d.url])), country: 'RO' }],
});

const server = spawn('valgrind', ['--tool=callgrind', '--separate-threads=yes', '--instr-atstart=no', `--callgrind-out-file=${outDir}/cg.%p`,
  process.execPath, ...NODE_FLAGS, ...(run === 'bare' ? ['--import', 'tsx', join(CURRENT_ROOT, 'test/bench/bare-koa.ts')] : serverArgsOf(root))],
{ env, cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
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
const control = (...a: string[]) => execFileSync('callgrind_control', [...a, String(server.pid)], { env, stdio: 'ignore' });

// Idle connections are closed by this side after a second, well before the server's 5 s: a
// server under valgrind answers late, and a keep-alive race would reset a request.
const pool = new Pool(`http://127.0.0.1:${port}`, { connections: CLIENTS, keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000 });
const path = run === 'bare' ? '/' : `/webhooks/service/${route}?id=${account.scriptId}`;
let seq = 0;
async function send(n: number): Promise<void> {
  let sent = 0;
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (sent++ < n) {
      const body = JSON.stringify(checkout(`instr-${++seq}`));
      const post = () => pool.request({ path, method: 'POST', headers: { 'content-type': 'application/json', 'x-service-access-token': account.accessToken }, body });
      // A connection reset before the answer (a keep-alive race) is sent again once.
      const r = await post().catch((e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' ? post() : Promise.reject(e)));
      await r.body.text();
      if (r.statusCode !== 200) throw new Error(`answered ${r.statusCode}`);
    }
  }));
}

process.on('exit', () => server.kill('SIGKILL')); // never left running under valgrind after a failure
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
const byThread = new Map<number, number>();
for (const f of readdirSync(outDir)) {
  const text = readFileSync(join(outDir, f), 'utf8');
  const thread = Number(text.match(/^thread: (\d+)/m)?.[1] ?? 0);
  byThread.set(thread, (byThread.get(thread) ?? 0) + Number(text.match(/^totals: (\d+)/m)?.[1] ?? 0));
}
rmSync(dataDir, { recursive: true, force: true });
rmSync(outDir, { recursive: true, force: true });
const k = (n: number) => Math.round(n / N / 1000);
const all = [...byThread.values()].reduce((a, b) => a + b, 0);
const others = [...byThread].filter(([t, n]) => t !== 1 && k(n) > 0).sort((a, b) => b[1] - a[1]).map(([t, n]) => `${t}: ${k(n)}k`);
console.log(`${run}${root === CURRENT_ROOT ? '' : ` (${root})`}: HTTP thread ${k(byThread.get(1) ?? 0)}k instructions per request; all threads ${k(all)}k ` +
  `(other threads: ${others.join(', ') || 'none'}; mostly V8's background compiler and collector, which vary from run to run, ` +
  'and for endpoint 1 the writer and delivery threads)');
