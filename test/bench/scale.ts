// `npm run bench:scale [-- --json FILE]`: N = 1, 2 and 4 tracklane instances on one
// PostgreSQL database, each instance's processes capped at BENCH_SCALE_SHARE (0.25) of a core
// with the cgroup cpu controller, as N small machines would be; PostgreSQL, the load generator
// and the destination doubles stay outside the caps. For each N: intake and end-to-end
// events/s with their ratio to N=1, the instances' CPU per event and PostgreSQL's own.
// Without a usable cpu controller or PostgreSQL it says why and exits 0.
// `-- --ref <commit>` (or BENCH_REF): each N alternately on this tree and on a build of that
// commit (reference.ts), BENCH_REF_PAIRS times, printed as ratios to it.
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DestinationDouble } from '../helpers/destination-double.ts';
import { createTestDatabase, PG_ADMIN_URL, postgresAvailable } from '../helpers/postgres.ts';
import { cpuCaps, type CappedGroup, type CpuCaps } from './cpu-cap.ts';
import { checkout, cpuSeconds, nativeEvents, startDoubles, stop } from './payloads.ts';
import { alternation, benchOptions, comparisonTable, currentSide, prepareReference, sideSetup, type Compared, type Side, type SideName } from './reference.ts';
import { watchPostgresCpu } from './pg-cpu.ts';

const TYPES = ['ga4', 'meta-capi', 'tiktok', 'webhook'];
const SHARE = Number(process.env.BENCH_SCALE_SHARE ?? 0.25);
const COUNTS = (process.env.BENCH_SCALE_INSTANCES ?? '1,2,4').split(',').map(Number);
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
/** Closed-loop connections per instance, enough to keep a capped instance busy; N instances get N times as many. */
const CONNECTIONS = Number(process.env.BENCH_SCALE_CONNECTIONS ?? 16);
const START_TIMEOUT_MS = 60_000;
/** Seconds of load before the measured window (its events delivered first), so each capped instance has compiled its hot paths. */
const WARMUP = Number(process.env.BENCH_SCALE_WARMUP ?? 3);

interface Result {
  instances: number; accepted: number; intake_per_second: number; p50_ms: number; p99_ms: number; errors: number; non_2xx: number;
  all_delivered: boolean; seconds: number; end_to_end_per_second: number;
  /** CPU of every instance together (all threads, /proc), per accepted event, from the first request until every native event arrived. */
  instance_cpu_ms_per_event: number;
  /** The instances' CPU over that span, in cores per instance: at most SHARE. */
  cores_per_instance: number; throttled_periods_pct: number;
  /** Null where /proc does not show PostgreSQL's processes (it runs on another machine or in a container). */
  pg_backend_cpu_ms_per_event: number | null; pg_background_cpu_ms_per_event: number | null; pg_cores: number | null; pg_backends: number;
  accepted_per_instance: number[];
}

/**
 * Spawns an instance as `npm start` does and resolves with its port once it logs that it
 * listens; the child is pushed to `into` at once, so a failed start is still stopped. After
 * START_TIMEOUT_MS it rejects with what the instance printed.
 */
async function startInstance(env: NodeJS.ProcessEnv, into: ChildProcess[], side: Side): Promise<number> {
  const child = spawn(process.execPath, [...side.serverArgs], { env, cwd: side.root, stdio: ['ignore', 'pipe', 'pipe'] });
  into.push(child);
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`instance ${child.pid} did not log that it listens within ${START_TIMEOUT_MS / 1000} s; it printed:\n${out}`)), START_TIMEOUT_MS);
    child.stderr!.on('data', (d: Buffer) => { out += d; });
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = out.match(/"url":"http:\/\/[^:]+:(\d+)".*tracklane listening/);
      if (m) {
        clearTimeout(timer);
        // Its log is dropped from here on (read, so the instance never blocks on a full pipe); what it writes to stderr is shown.
        child.stdout!.removeAllListeners('data');
        child.stderr!.removeAllListeners('data');
        child.stdout!.resume();
        child.stderr!.pipe(process.stderr);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`instance exited with ${code}: ${out}`));
    });
  });
}

let sequence = 0;
/** Closed-loop endpoint-1 load on every instance at once, CONNECTIONS each. */
async function loadAll(ports: number[], scriptId: string, accessToken: string, seconds: number, prefix: string) {
  return Promise.all(ports.map((port) => autocannon({
    url: `http://127.0.0.1:${port}/webhooks/service/event?id=${scriptId}`, connections: CONNECTIONS, duration: seconds,
    requests: [{
      method: 'POST', headers: { 'content-type': 'application/json', 'x-service-access-token': accessToken },
      setupRequest: (req) => ({ ...req, body: JSON.stringify(checkout(`${prefix}-${++sequence}`)) }),
    }],
  })));
}

/** Waits until the doubles hold `expected` native events (or two minutes); returns how many they hold. */
async function delivered(doubles: ReadonlyMap<string, DestinationDouble>, expected: number): Promise<number> {
  const count = () => TYPES.reduce((n, t) => n + nativeEvents(t, doubles.get(t)!), 0);
  const deadline = Date.now() + 120_000;
  let got = count();
  while (got < expected && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    got = count();
  }
  return got;
}

/**
 * `sqlite`: one instance on its own SQLite file instead, under the same cap (PostgreSQL mode's
 * CPU per event is compared with it). `side`: the checkout whose code runs (a reference build).
 */
async function measure(instances: number, caps: CpuCaps, mode: 'postgres' | 'sqlite' = 'postgres', side: Side = currentSide()): Promise<Result> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tl-scale-'));
  const db = mode === 'postgres' ? await createTestDatabase() : { url: '', name: '', drop: async () => undefined };
  const env: NodeJS.ProcessEnv = {
    ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ALLOW_PRIVATE_DESTINATIONS: '1', DATABASE_URL: db.url,
  };
  const doubles = await startDoubles(TYPES);
  const groups: CappedGroup[] = [];
  const servers: ChildProcess[] = [];
  const release = async () => {
    for (const s of servers.splice(0)) await stop(s);
    for (const g of groups.splice(0)) await g.remove();
  };
  // Interrupted, the capped groups are still removed (an empty group left behind would be harmless, but clutter).
  const onSignal = () => void release().finally(() => db.drop().finally(() => process.exit(130)));
  process.once('SIGINT', onSignal);
  try {
    // Made by the side's own code: its schema and migrations.
    const [{ scriptId, accessToken }] = await sideSetup<{ scriptId: string; accessToken: string }[]>(side, {
      task: 'accounts', env, accounts: [{ name: 'Scale', doubles: Object.fromEntries([...doubles].map(([t, d]) => [t, d.url])), country: 'RO' }],
    });
    // Started uncapped one after another (start-up is not measured), then each moved into its group with every thread.
    const ports: number[] = [];
    for (let i = 0; i < instances; i++) {
      ports.push(await startInstance({ ...env, LOG_LEVEL: 'info' }, servers, side));
      const g = caps.create(`tracklane-scale-${process.pid}-${i}`, SHARE);
      groups.push(g);
      g.add(servers[i].pid!);
    }
    const warm = await loadAll(ports, scriptId, accessToken, WARMUP, `warm${instances}`);
    const before = await delivered(doubles, warm.reduce((n, r) => n + r['2xx'], 0) * TYPES.length);

    const cpu0 = servers.map((s) => cpuSeconds(s.pid!));
    const throttle0 = groups.map((g) => g.throttling());
    const pgCpu = mode === 'postgres' ? await watchPostgresCpu(db.name) : { stop: async () => ({ backends: 0, background: 0, processes: 0, visible: false }) };
    const started = performance.now();
    const runs = await loadAll(ports, scriptId, accessToken, DURATION, `run${instances}`);
    const accepted = runs.reduce((n, r) => n + r['2xx'], 0);
    const expected = before + accepted * TYPES.length;
    const got = await delivered(doubles, expected);
    const seconds = (performance.now() - started) / 1000;
    const pgUsed = await pgCpu.stop();
    const cpu = servers.reduce((n, s, i) => n + cpuSeconds(s.pid!) - cpu0[i], 0);
    const throttle = groups.map((g, i) => ({ periods: g.throttling().periods - throttle0[i].periods, throttled: g.throttling().throttled - throttle0[i].throttled }));
    const periods = throttle.reduce((n, t) => n + t.periods, 0);
    const perEvent = (s: number) => Math.round((s * 1e6) / Math.max(1, accepted)) / 1000;
    return {
      instances, accepted, intake_per_second: Math.round(accepted / DURATION),
      p50_ms: Math.max(...runs.map((r) => r.latency.p50)), p99_ms: Math.max(...runs.map((r) => r.latency.p99)),
      errors: runs.reduce((n, r) => n + r.errors + r.timeouts, 0), non_2xx: runs.reduce((n, r) => n + r.non2xx, 0),
      all_delivered: got >= expected, seconds: Math.round(seconds * 10) / 10,
      end_to_end_per_second: Math.round((got - before) / TYPES.length / seconds),
      instance_cpu_ms_per_event: perEvent(cpu), cores_per_instance: Math.round((cpu / seconds / instances) * 1000) / 1000,
      throttled_periods_pct: periods === 0 ? 0 : Math.round((throttle.reduce((n, t) => n + t.throttled, 0) * 1000) / periods) / 10,
      pg_backend_cpu_ms_per_event: pgUsed.visible ? perEvent(pgUsed.backends) : null,
      pg_background_cpu_ms_per_event: pgUsed.visible ? perEvent(pgUsed.background) : null,
      pg_cores: pgUsed.visible ? Math.round(((pgUsed.backends + pgUsed.background) / seconds) * 1000) / 1000 : null, pg_backends: pgUsed.processes,
      accepted_per_instance: runs.map((r) => r['2xx']),
    };
  } finally {
    process.off('SIGINT', onSignal);
    await release();
    for (const d of doubles.values()) await d.close();
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Each N alternately on this tree and on the reference, as ratios to it. */
async function against(caps: CpuCaps, ref: string, pairs: number, json: string | null): Promise<void> {
  const reference = prepareReference(ref);
  try {
    const sides: Record<SideName, Side> = { current: currentSide(), reference };
    const rows: Compared[] = [];
    for (const n of COUNTS) {
      const runs: Record<SideName, Result[]> = { current: [], reference: [] };
      for (const { pair, side } of alternation(pairs)) {
        process.stderr.write(`N=${n}: pair ${pair + 1} of ${pairs}, ${side} (${sides[side].label})\n`);
        runs[side].push(await measure(n, caps, 'postgres', sides[side]));
      }
      const figure = (name: string, unit: string, of: (r: Result) => number | null) => {
        const [c, r] = [runs.current.map(of), runs.reference.map(of)];
        if ([...c, ...r].some((v) => v === null)) return;
        rows.push({ figure: `N=${n}: ${name}`, unit, current: c as number[], reference: r as number[] });
      };
      figure('intake', 'events/s', (r) => r.intake_per_second);
      figure('end to end', 'events/s', (r) => r.end_to_end_per_second);
      figure('instances\' CPU per event', 'ms', (r) => r.instance_cpu_ms_per_event);
      figure('PostgreSQL backends\' CPU per event', 'ms', (r) => r.pg_backend_cpu_ms_per_event);
    }
    console.log(`\nAgainst the reference: this tree (${sides.current.label}) and ${reference.commit.slice(0, 12)} (${reference.built ? 'built' : 'no build script: its sources'}), ` +
      `N instances on one PostgreSQL database each capped at ${SHARE} core (${caps.describe}), each N measured ${pairs} time${pairs === 1 ? '' : 's'} on each side, alternately ` +
      `(current, reference, …); ${CONNECTIONS} connections per instance, ${DURATION} s of endpoint-1 load after ${WARMUP} s of warm-up. There is no bare-Koa round here.\n`);
    console.log(comparisonTable(rows, { current: sides.current.label, reference: reference.label }));
    if (json !== null) {
      writeFileSync(json, `${JSON.stringify({ current: sides.current.label, reference: reference.commit, pairs, share: SHARE, figures: rows }, null, 2)}\n`);
      console.log(`\nfigures written to ${json}`);
    }
  } finally {
    reference.close();
  }
}

async function main(): Promise<void> {
  const options = benchOptions(process.argv.slice(2), process.env);
  const caps = cpuCaps(`tracklane-scale-${process.pid}`);
  if ('unavailable' in caps) {
    console.log(`bench:scale skipped: ${caps.unavailable}. It caps each instance with the cgroup cpu controller; run it as root on Linux with that controller.`);
    return;
  }
  if (!(await postgresAvailable())) {
    console.log(`bench:scale skipped: PostgreSQL does not answer at ${PG_ADMIN_URL} (TRACKLANE_TEST_PG_URL to point it elsewhere).`);
    return;
  }
  if (options.ref !== null) return against(caps, options.ref, options.pairs, options.json);
  const results: Result[] = [];
  for (const n of COUNTS) results.push(await measure(n, caps));
  // The same load on one instance in SQLite mode, under the same cap: what PostgreSQL mode costs the instance.
  const sqlite = await measure(1, caps, 'sqlite');
  const base = results[0];
  const ratio = (a: number, b: number) => (b === 0 ? 'n/a' : `${(a / b).toFixed(2)}×`);
  console.log(`\nN instances on one PostgreSQL database, each capped at ${SHARE} core (${caps.describe}); PostgreSQL, the load generator and ` +
    `the doubles uncapped. ${CONNECTIONS} connections per instance, ${DURATION} s of endpoint-1 load (unique event ids) after ${WARMUP} s of warm-up, ` +
    `4 destinations delivering; end to end: from the first request until every native event arrived. CPU per accepted event, all threads, from /proc.\n`);
  console.log('| instances | intake events/s | ratio to N=1 | end-to-end events/s | ratio to N=1 | p50 ms | p99 ms | accepted | all delivered after s | ' +
    'instances\' CPU ms per event | cores used per instance | throttled periods | PostgreSQL backends\' CPU ms per event | PostgreSQL background CPU ms per event | PostgreSQL cores |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    console.log(`| ${r.instances} | ${r.intake_per_second} | ${ratio(r.intake_per_second, base.intake_per_second)} | ${r.end_to_end_per_second} | ` +
      `${ratio(r.end_to_end_per_second, base.end_to_end_per_second)} | ${r.p50_ms} | ${r.p99_ms} | ${r.accepted} | ${r.all_delivered ? r.seconds : `NOT ALL (${r.seconds})`} | ` +
      `${r.instance_cpu_ms_per_event.toFixed(2)} | ${r.cores_per_instance.toFixed(2)} | ${r.throttled_periods_pct} % | ${r.pg_backend_cpu_ms_per_event?.toFixed(2) ?? 'n/a'} | ` +
      `${r.pg_background_cpu_ms_per_event?.toFixed(2) ?? 'n/a'} | ${r.pg_cores?.toFixed(2) ?? 'n/a'} |`);
  }
  const errs = results.filter((r) => r.errors + r.non_2xx > 0);
  if (errs.length > 0) console.log(`\nErrors or non-2xx answers: ${errs.map((r) => `N=${r.instances}: ${r.errors} errors, ${r.non_2xx} non-2xx`).join('; ')}.`);
  if (results.some((r) => r.pg_cores === null)) console.log('\nPostgreSQL CPU n/a: its processes are not visible in /proc here (another machine or a container).');
  const pgOne = results.find((r) => r.instances === 1);
  console.log(`\nSQLite mode, one instance under the same cap and load: intake ${sqlite.intake_per_second} events/s, end to end ${sqlite.end_to_end_per_second} events/s, ` +
    `${sqlite.instance_cpu_ms_per_event.toFixed(2)} ms of instance CPU per event` +
    (pgOne ? `; PostgreSQL mode's instance CPU per event ÷ SQLite mode's: **${(pgOne.instance_cpu_ms_per_event / sqlite.instance_cpu_ms_per_event).toFixed(2)}×** ` +
      `(${(pgOne.instance_cpu_ms_per_event + (pgOne.pg_backend_cpu_ms_per_event ?? 0)).toFixed(2)} ms with PostgreSQL's backends).` : '.'));
  console.log(`\nAccepted per instance: ${results.map((r) => `N=${r.instances}: ${r.accepted_per_instance.join(' / ')}`).join('; ')}.`);
  if (options.json !== null) {
    writeFileSync(options.json, `${JSON.stringify({ share: SHARE, caps: caps.describe, connections_per_instance: CONNECTIONS, duration_s: DURATION, warmup_s: WARMUP, results, sqlite }, null, 2)}\n`);
    console.log(`\nfigures written to ${options.json}`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
