// `npm run bench:idle [-- --json FILE]`: what an idle instance costs. The real server (as
// `npm start` runs it: the build in dist/ when it is fresh) in SQLite mode and, where
// PostgreSQL answers, in PostgreSQL mode, each with no accounts and with one account whose one
// destination (a loopback double) gets no traffic; before them, as the floor, a bare Koa
// server whose HTTP server checks its connections every second as tracklane's does. After
// BENCH_IDLE_WARMUP seconds (start-up, the first delivery passes) it reads, over
// BENCH_IDLE_SECONDS, the process's CPU time (every thread: the sum of each thread's on-CPU
// nanoseconds in /proc/<pid>/task/*/schedstat; utime + stime from /proc/<pid>/stat beside it)
// as % of one core, and each thread's voluntary context switches (/proc/<pid>/task/*/status).
// Then, where strace runs, it counts for BENCH_IDLE_STRACE_SECONDS each thread's event-loop
// wakes: the epoll waits that blocked (a timeout other than 0), by thread, under ptrace (so
// after the CPU window, not during it). In PostgreSQL mode it also reads the CPU of the
// database's backends over the CPU window (what the instance's idle queries cost PostgreSQL).
// `--stores postgres` (or `sqlite`; default both) runs only those modes, `--no-floor` leaves out
// the bare Koa run: for alternating runs of one mode against another tree.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { coreBuild } from '../../src/build-state.cjs';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/open-store.ts';
import { createTestDatabase, PG_ADMIN_URL, postgresAvailable } from '../helpers/postgres.ts';
import { benchAccount, cpuSeconds, startDoubles, startServer, stop, waitListening } from './payloads.ts';
import { watchPostgresCpu } from './pg-cpu.ts';

const WARMUP = Number(process.env.BENCH_IDLE_WARMUP ?? 60);
const SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 30);
const STRACE_SECONDS = Number(process.env.BENCH_IDLE_STRACE_SECONDS ?? 10);

interface ThreadReading { name: string; ns: number; voluntary: number }

/** Each thread's name, on-CPU ns so far and voluntary context switches so far, by thread id. */
function readThreads(pid: number): Map<string, ThreadReading> {
  const out = new Map<string, ThreadReading>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      out.set(tid, {
        name: tid === String(pid) ? 'main' : status.match(/^Name:\s+(.*)$/m)?.[1] ?? '?', ns,
        voluntary: Number(status.match(/^voluntary_ctxt_switches:\s+(\d+)/m)?.[1] ?? 0),
      });
    } catch { /* the thread ended */ }
  }
  return out;
}

/**
 * Blocking epoll waits per second by thread id over `seconds` (strace -f on `pid`), or null
 * when strace is missing or may not trace it.
 */
function loopWakes(pid: number, seconds: number): Map<string, number> | null {
  if (spawnSync('strace', ['-V']).status !== 0) return null;
  const out = join(mkdtempSync(join(tmpdir(), 'tl-idle-strace-')), 'trace');
  spawnSync('timeout', [String(seconds), 'strace', '-f', '-qq', '-e', 'trace=epoll_wait,epoll_pwait', '-o', out, '-p', String(pid)]);
  let text: string;
  try {
    text = readFileSync(out, 'utf8');
  } catch {
    return null;
  } finally {
    rmSync(join(out, '..'), { recursive: true, force: true });
  }
  const counts = new Map<string, number>();
  // A call's timeout is the argument before the sigmask (NULL) in both the whole line and the
  // "resumed" half of one that was interrupted.
  for (const line of text.split('\n')) {
    if (line.includes('<unfinished')) continue;
    const m = line.match(/^(\d+)\s.*?,\s*(-?\d+),\s*(?:NULL|0x[0-9a-f]+),\s*8\)\s*=/) ?? line.match(/^(\d+)\s.*epoll_wait\(.*,\s*(-?\d+)\)\s*=/);
    if (m && m[2] !== '0') counts.set(m[1], (counts.get(m[1]) ?? 0) + 1);
  }
  if (counts.size === 0) return null;
  return new Map([...counts].map(([tid, n]) => [tid, n / seconds]));
}

interface Result {
  run: string; seconds: number; load_average_1m: number;
  /** % of a core: schedstat (ns) and /proc/<pid>/stat ticks (1/100 s). */
  cpu_pct: number; cpu_pct_ticks: number;
  voluntary_switches_per_second: number;
  /** Blocking epoll waits per second: the HTTP (main) thread's, the others' summed, and each thread's that woke at least once in the window. */
  loop_wakes: { main: number; others: number; threads: number[] } | null;
  pg_backend_cpu_pct: number | null;
}

const round = (n: number, places: number) => Math.round(n * 10 ** places) / 10 ** places;
const sleep = (s: number) => new Promise((r) => setTimeout(r, s * 1000));

/** Reads `pid` as described at the top, after the warm-up. */
async function observe(run: string, pid: number, pgDatabase?: string): Promise<Result> {
  await sleep(WARMUP);
  const pgCpu = pgDatabase ? await watchPostgresCpu(pgDatabase, 5_000) : undefined;
  const load = loadavg()[0];
  const ticks0 = cpuSeconds(pid);
  const t0 = readThreads(pid);
  const at0 = performance.now();
  await sleep(SECONDS);
  const t1 = readThreads(pid);
  const ticks1 = cpuSeconds(pid);
  const seconds = (performance.now() - at0) / 1000;
  const pgUsed = await pgCpu?.stop();
  let ns = 0;
  let voluntary = 0;
  for (const [tid, t] of t1) {
    ns += t.ns - (t0.get(tid)?.ns ?? 0);
    voluntary += t.voluntary - (t0.get(tid)?.voluntary ?? 0);
  }
  const wakes = loopWakes(pid, STRACE_SECONDS);
  return {
    run, seconds: round(seconds, 1), load_average_1m: round(load, 2),
    cpu_pct: round((ns / 1e9 / seconds) * 100, 3), cpu_pct_ticks: round(((ticks1 - ticks0) / seconds) * 100, 2),
    voluntary_switches_per_second: round(voluntary / seconds, 1),
    loop_wakes: wakes === null ? null : {
      main: round(wakes.get(String(pid)) ?? 0, 1),
      others: round([...wakes].filter(([tid]) => tid !== String(pid)).reduce((n, [, w]) => n + w, 0), 1),
      threads: [...wakes].filter(([tid]) => tid !== String(pid)).map(([, w]) => round(w, 1)).sort((a, b) => b - a),
    },
    pg_backend_cpu_pct: pgUsed?.visible ? round((pgUsed.backends / seconds) * 100, 3) : null,
  };
}

async function bareKoa(): Promise<Result> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'test/bench/bare-koa.ts'], {
    env: { ...process.env, PORT: '0', BARE_KOA_CHECK_MS: '1000' }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await waitListening(child, /listening (\d+)/);
    child.stdout!.resume();
    return await observe('bare Koa (floor: an HTTP server checking its connections every second)', child.pid!);
  } finally {
    await stop(child);
  }
}

async function tracklane(store: 'sqlite' | 'postgres', withAccount: boolean): Promise<Result> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tl-idle-'));
  const db = store === 'postgres' ? await createTestDatabase() : { url: '', name: '', drop: async () => undefined };
  const env: NodeJS.ProcessEnv = {
    ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ALLOW_PRIVATE_DESTINATIONS: '1', DATABASE_URL: db.url,
  };
  const doubles = await startDoubles(withAccount ? ['webhook'] : []);
  let child: ChildProcess | undefined;
  try {
    if (withAccount) {
      const s = await openStore(loadConfig(env));
      await benchAccount(s, 'Idle', { doubles, country: 'RO' });
      await s.close();
    }
    child = (await startServer(env)).child;
    return await observe(`tracklane, ${store === 'sqlite' ? 'SQLite' : 'PostgreSQL'}, ${withAccount ? 'one account with one idle destination' : 'no accounts'}`,
      child.pid!, store === 'postgres' ? db.name : undefined);
  } finally {
    if (child) await stop(child);
    for (const d of doubles.values()) await d.close();
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const build = coreBuild(process.cwd());
  const code = build.fresh ? 'the build in dist/' : `the TypeScript sources through tsx (${build.why}; \`npm run build\` first to run what npm start runs after install)`;
  const pg = await postgresAvailable();
  const storesAt = process.argv.indexOf('--stores');
  const wanted = storesAt === -1 ? ['sqlite', 'postgres'] : (process.argv[storesAt + 1] ?? '').split(',');
  const results: Result[] = process.argv.includes('--no-floor') ? [] : [await bareKoa()];
  for (const store of (['sqlite', 'postgres'] as const).filter((s) => wanted.includes(s) && (s === 'sqlite' || pg))) {
    for (const withAccount of [false, true]) results.push(await tracklane(store, withAccount));
  }
  const cores = execFileSync('nproc').toString().trim();
  console.log(`\nIdle: each process left ${WARMUP} s after it listens, then ${SECONDS} s with no traffic; the server runs ${code}; ${cores} cores. ` +
    'CPU: every thread of the process (schedstat ns; /proc stat ticks beside it), % of one core. Voluntary context switches: every thread, per second. ' +
    `Event-loop wakes: blocking epoll waits per second, by strace over ${STRACE_SECONDS} s after the CPU window (main: the HTTP thread; other threads: the delivery thread, ` +
    'worker pools, SQLite writer, summed, and each one that woke). PostgreSQL: its backends\' CPU for the bench database over the CPU window.\n');
  console.log('| run | CPU % of a core | (stat ticks) | voluntary switches/s | event-loop wakes/s, main | other threads (each) | PostgreSQL backends\' CPU % | load average (1 min) |');
  console.log('|---|---:|---:|---:|---:|---|---:|---:|');
  for (const r of results) {
    const w = r.loop_wakes;
    console.log(`| ${r.run} | ${r.cpu_pct.toFixed(3)} | ${r.cpu_pct_ticks.toFixed(2)} | ${r.voluntary_switches_per_second} | ${w?.main ?? 'n/a'} | ` +
      `${w ? `${w.others}${w.threads.length > 0 ? ` (${w.threads.join(', ')})` : ''}` : 'n/a'} | ${r.pg_backend_cpu_pct?.toFixed(3) ?? 'n/a'} | ${r.load_average_1m} |`);
  }
  if (!pg) console.log(`\nPostgreSQL mode skipped: PostgreSQL does not answer at ${PG_ADMIN_URL} (TRACKLANE_TEST_PG_URL to point it elsewhere).`);
  if (results.every((r) => r.loop_wakes === null)) console.log('\nEvent-loop wakes n/a: strace is missing or may not trace the server here.');
  const at = process.argv.indexOf('--json');
  if (at !== -1 && process.argv[at + 1]) {
    writeFileSync(process.argv[at + 1], `${JSON.stringify({ warmup_s: WARMUP, seconds: SECONDS, strace_seconds: STRACE_SECONDS, code, results }, null, 2)}\n`);
    console.log(`\nfigures written to ${process.argv[at + 1]}`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
