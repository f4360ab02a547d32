// `npm run bench`: autocannon against the real server (spawned as its own process, real
// SQLite file) and a bare-Koa baseline in the same run, alternating: a bare-Koa round runs
// just before each single-event run, and that run's ratios are to its own round, so the
// machine's swings from minute to minute cancel out of the ratios. Every request
// carries a unique event id, so each one is stored, claims its dedup key and fans out.
// Endpoint 1 runs against an account with four destinations on loopback doubles, with
// delivery running. Once that run's events are all delivered, the end-to-end run sends
// BENCH_E2E_EVENTS (20,000) unique events and times them until the doubles hold every
// native event, with each event's ack → receipt lag; then endpoint 1 again at a fixed
// offered rate (BENCH_E2E_RATE), for the lag at a load below saturation. Each single-event
// figure and the end-to-end run also give the server's CPU per event (every thread, from
// /proc) as a multiple of bare Koa's CPU per request in the round before them: CPU per
// event swings far less with the machine's hour than rates do.
// `-- --ref <commit>` (or BENCH_REF): every figure alternately on this tree and on a build of
// that commit instead, as ratios to it (run-against.ts).
import { hashingRows, hashingTable } from './hash-pool.ts';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { DestinationDouble } from '../helpers/destination-double.ts';
import { benchAccount, checkout, cpuSeconds, peakRssMb, SERVER_ARGS, SQLITE_OPEN_WORK_SQL, startDoubles, stop, waitListening } from './payloads.ts';
import { BATCH_CONNECTIONS, CONNECTIONS, cpuUs, DRAIN_EVENTS, DURATION, E2E_EVENTS, lagsOf, load, nativeCount, nativeDelivered, percentile, TYPES, type Row } from './load.ts';
import { checkpointedBytes, drainBacklog } from './drain.ts';
import { sqliteFile } from '../../src/store/open-store.ts';
import Database from 'better-sqlite3';
import { overload } from './overload.ts';
import { benchOptions } from './reference.ts';
import { runAgainst } from './run-against.ts';

/** Users hashed in the hashing rows (`BENCH_HASH_USERS`). */
const HASH_USERS = Number(process.env.BENCH_HASH_USERS ?? 10_000);
/** The overload row: the pending bound, and how long endpoint 1 is loaded once the queue is full (ms). */
const OVERLOAD_BOUND = 100;
const OVERLOAD_WINDOW_MS = 400;
/** Batch intake runs: events per request, and the concurrent clients a queueing backend library would use. */
const BATCH_SIZES = [20, 100];
/**
 * The fixed-rate end-to-end run: endpoint 1 offered this many events per second (open loop,
 * spread over the connections) for DURATION, after the closed-loop run's backlog is delivered;
 * it reports the ack → receipt lag at a load the server is not saturated by.
 */
const E2E_RATE = Number(process.env.BENCH_E2E_RATE ?? 1_500);

/** Waits until the server's store has nothing left for fan-out (queued, or after its cursor) and no pending delivery (every record written), at most 30 s. */
async function waitQuiet(file: string): Promise<void> {
  const db = new Database(file, { readonly: true });
  try {
    const busy = db.prepare(SQLITE_OPEN_WORK_SQL);
    for (const deadline = Date.now() + 30_000; Date.now() < deadline && (busy.get() as { n: number }).n > 0;) await new Promise((r) => setTimeout(r, 100));
  } finally {
    db.close();
  }
}

async function main(): Promise<void> {
  const options = benchOptions(process.argv.slice(2), process.env);
  // Against a reference build: each figure alternately on this tree and on it (run-against.ts).
  if (options.ref !== null) return runAgainst(options);
  const dataDir = mkdtempSync(join(tmpdir(), 'tl-bench-'));
  const env = { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ALLOW_PRIVATE_DESTINATIONS: '1' };
  const doubles = await startDoubles(TYPES);
  const store = await openStore(loadConfig(env));
  const plain = await benchAccount(store, 'Bench');
  const withDest = await benchAccount(store, 'Bench 4 destinations', { doubles, country: 'RO' });
  await store.close();

  const rows: Row[] = [];
  const bare = spawn(process.execPath, ['--import', 'tsx', 'test/bench/bare-koa.ts'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const barePort = await waitListening(bare, /listening (\d+)/);
  const bareRound = () => load('bare Koa (baseline)', `http://127.0.0.1:${barePort}/`, {}, bare.pid!);
  /** A bare-Koa round, then the run it is the baseline of. */
  const againstBare = async (run: () => Promise<Row>): Promise<Row> => {
    const round = await bareRound();
    const row = await run();
    row.bare = round;
    return row;
  };

  const server = spawn(process.execPath, [...SERVER_ARGS], { env: { ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await waitListening(server, /"url":"http:\/\/[^:]+:(\d+)"/);
  server.stdout!.resume();
  const base = `http://127.0.0.1:${port}/webhooks/service`;
  rows.push(await againstBare(() => load('endpoint 2, validation only (no destinations)', `${base}/event/test?id=${plain.scriptId}`,
    { 'x-service-access-token': plain.accessToken }, server.pid!)));

  const nativeRequestsNow = () => TYPES.reduce((n, t) => n + doubles.get(t)!.requests.length, 0);
  let started = 0;
  const e1 = await againstBare(() => {
    started = performance.now();
    return load('endpoint 1, durable ack, 4 destinations delivering', `${base}/event?id=${withDest.scriptId}`,
      { 'x-service-access-token': withDest.accessToken }, server.pid!);
  });
  const duringRun = nativeCount(doubles);
  // Everything acknowledged is delivered before the end-to-end run starts (each event → 4 native events).
  const caughtUp = await nativeDelivered(doubles, e1.ok * TYPES.length);
  const catchUpSeconds = (performance.now() - started) / 1000;
  e1.note = `native events delivered during the run ${duringRun}; all ${caughtUp} delivered ${catchUpSeconds.toFixed(1)} s after its first request ` +
    `(${Math.round(caughtUp / TYPES.length / catchUpSeconds)} events/s)`;
  rows.push(e1);

  // End to end: E2E_EVENTS unique events, closed loop; timed from the first request until the
  // doubles hold every native event of them. Its CPU per event is set against a bare-Koa round of its own.
  const e2eBare = await bareRound();
  const acks = new Map<string, number>();
  const requestsBefore = nativeRequestsNow();
  const e2eStart = performance.now();
  const cpuAtStart = cpuSeconds(server.pid!);
  const e2eRun = await load('end to end', `${base}/event?id=${withDest.scriptId}`,
    { 'x-service-access-token': withDest.accessToken }, server.pid!, { acks, amount: E2E_EVENTS });
  const expected = caughtUp + e2eRun.ok * TYPES.length;
  const delivered = (await nativeDelivered(doubles, expected)) - caughtUp;
  const e2eSeconds = (performance.now() - e2eStart) / 1000;
  const nativeRequests = nativeRequestsNow() - requestsBefore;
  // The server's CPU (every thread) per event, from the first request to the last native event out.
  const cpuUsPerEvent = ((cpuSeconds(server.pid!) - cpuAtStart) * 1e6) / e2eRun.ok;
  const lags = lagsOf(doubles.get('webhook')!, acks);
  const pct = (p: number) => percentile(lags, p);
  const endToEnd = {
    events: E2E_EVENTS, accepted: e2eRun.ok, native_expected: e2eRun.ok * TYPES.length, native_delivered: delivered,
    all_delivered: delivered >= e2eRun.ok * TYPES.length, intake_per_second: Math.round(e2eRun.eps), ack_p99_ms: e2eRun.p99,
    seconds: Math.round(e2eSeconds * 10) / 10, events_per_second: Math.round(delivered / TYPES.length / e2eSeconds),
    native_events_per_second: Math.round(delivered / e2eSeconds), native_requests_per_second: Math.round(nativeRequests / e2eSeconds),
    lag_ms: { p50: pct(50), p99: pct(99), samples: lags.length }, server_cpu_ms_per_event: Math.round(cpuUsPerEvent / 10) / 100,
    bare_rps: Math.round(e2eBare.rps), bare_cpu_us_per_request: Math.round(cpuUs(e2eBare)),
    cpu_ratio_to_bare: Math.round((cpuUsPerEvent / cpuUs(e2eBare)) * 10) / 10,
  };

  // The same endpoint at a fixed rate below saturation, once everything above is delivered.
  const rateAcks = new Map<string, number>();
  // What events delivered as they arrive (the lanes keep up: write-once bookkeeping) leave in the store.
  const storeFile = sqliteFile(loadConfig(env));
  const bytesBefore = checkpointedBytes(storeFile);
  const rated = await load(`endpoint 1 at ${E2E_RATE} events/s`, `${base}/event?id=${withDest.scriptId}`,
    { 'x-service-access-token': withDest.accessToken }, server.pid!, { acks: rateAcks, rate: E2E_RATE });
  const ratedExpected = caughtUp + delivered + rated.ok * TYPES.length;
  const ratedDelivered = await nativeDelivered(doubles, ratedExpected);
  const ratedLags = lagsOf(doubles.get('webhook')!, rateAcks);
  // Delivered is not yet recorded: wait until nothing is queued for fan-out and no delivery is pending.
  await waitQuiet(storeFile);
  const ratedBytes = checkpointedBytes(storeFile) - bytesBefore;
  const fixedRate = {
    store_bytes_per_event: Math.round(ratedBytes / Math.max(1, rated.ok)),
    offered_per_second: E2E_RATE, accepted: rated.ok, accepted_per_second: Math.round(rated.eps), p99_ack_ms: rated.p99,
    all_delivered: ratedDelivered >= ratedExpected,
    lag_ms: { p50: percentile(ratedLags, 50), p99: percentile(ratedLags, 99), max: ratedLags.at(-1) ?? null, samples: ratedLags.length },
  };

  rows.push(await againstBare(() => load('endpoint 2 with 4 destinations (preview)', `${base}/event/test?id=${withDest.scriptId}`,
    { 'x-service-access-token': withDest.accessToken }, server.pid!)));
  await stop(bare);
  // Batch intake into the same account, delivery running (the backlog is not waited for).
  const batchRows: Row[] = [];
  for (const size of BATCH_SIZES) {
    batchRows.push(await load(`batch intake, ${size} events per request, 4 destinations delivering`, `${base}/events?id=${withDest.scriptId}`,
      { 'x-service-access-token': withDest.accessToken }, server.pid!, { batch: size, connections: BATCH_CONNECTIONS }));
  }
  rows.push(...batchRows);
  const intakePeakRss = peakRssMb(server.pid!);
  await stop(server);
  for (const d of doubles.values()) await d.close();
  rmSync(dataDir, { recursive: true, force: true });
  const drained = await drainBacklog(DRAIN_EVENTS, TYPES);
  const hashing = await hashingRows(HASH_USERS);
  const over = await overload(OVERLOAD_BOUND, OVERLOAD_WINDOW_MS, CONNECTIONS);

  const single = rows.filter((r) => r.bare !== undefined);
  const bareRounds = single.map((r) => r.bare!);
  const ratio = (r: Row) => r.rps / r.bare!.rps;
  const p99Ratio = (r: Row) => r.p99 / Math.max(r.bare!.p99, 1);
  const cpuRatio = (r: Row) => cpuUs(r) / cpuUs(r.bare!);
  console.log(`\n${DURATION} s per run, ${CONNECTIONS} connections, ~${JSON.stringify(checkout('x')).length} B checkout_completed body, unique event ids; ` +
    'each run follows its own bare-Koa round, and its ratios are to that round; CPU: the loaded process\'s, every thread, over the run, ' +
    'per request (endpoint 1\'s includes the delivery that ran meanwhile)\n');
  console.log('| run | req/s | bare Koa round req/s | ratio to bare | CPU µs per request | bare Koa CPU µs per request | CPU ratio to bare | ' +
    'p50 ms | p99 ms | p99.9 ms | bare p99 ms | p99 ratio | errors | non-2xx | RSS MB |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of single) {
    console.log(`| ${r.name} | ${Math.round(r.rps)} | ${Math.round(r.bare!.rps)} | ${ratio(r).toFixed(2)} | ${Math.round(cpuUs(r))} | ${Math.round(cpuUs(r.bare!))} | ` +
      `${cpuRatio(r).toFixed(1)}× | ${r.p50} | ${r.p99} | ${r.p999} | ${r.bare!.p99} | ${p99Ratio(r).toFixed(2)} | ${r.errors} | ${r.non2xx} | ${r.rssMb} |`);
  }
  console.log(`\nBare Koa rounds: ${bareRounds.map((b) => Math.round(b.rps)).join(', ')} req/s (p99 ${bareRounds.map((b) => b.p99).join(', ')} ms; ` +
    `CPU ${bareRounds.map((b) => Math.round(cpuUs(b))).join(', ')} µs per request; RSS ${bareRounds.map((b) => b.rssMb).join(', ')} MB); ` +
    `before the end-to-end run ${endToEnd.bare_rps} req/s, ${endToEnd.bare_cpu_us_per_request} µs per request.`);
  for (const r of rows) if (r.note) console.log(`\n${r.name}: ${r.note}`);
  console.log(`\nEnd to end: ${endToEnd.events} unique events into endpoint 1 (closed loop, ${CONNECTIONS} connections; intake ${endToEnd.intake_per_second}/s, ack p99 ${endToEnd.ack_p99_ms} ms), ` +
    `${endToEnd.all_delivered ? 'every one delivered to all 4 destinations' : `NOT ALL DELIVERED (${endToEnd.native_delivered} of ${endToEnd.native_expected} native events)`} ` +
    `${endToEnd.seconds} s after the first request: **${endToEnd.events_per_second} events/s end to end**, ${endToEnd.native_events_per_second} native events/s ` +
    `in ${endToEnd.native_requests_per_second} native requests/s; ack → webhook receipt lag p50 ${endToEnd.lag_ms.p50} ms, p99 ${endToEnd.lag_ms.p99} ms ` +
    `(${endToEnd.lag_ms.samples} events); server CPU ${endToEnd.server_cpu_ms_per_event.toFixed(2)} ms per event (all threads), ` +
    `**${endToEnd.cpu_ratio_to_bare}× bare Koa's CPU per request** (${endToEnd.bare_cpu_us_per_request} µs in the round just before).`);
  console.log(`\nEnd to end at a fixed rate: endpoint 1 offered ${fixedRate.offered_per_second} events/s for ${DURATION} s (open loop, ${CONNECTIONS} connections), ` +
    `${fixedRate.accepted} accepted (${fixedRate.accepted_per_second}/s, ack p99 ${fixedRate.p99_ack_ms} ms), ` +
    `${fixedRate.all_delivered ? 'every one delivered to all 4 destinations' : 'NOT ALL DELIVERED'}; ` +
    `ack → webhook receipt lag p50 ${fixedRate.lag_ms.p50} ms, p99 ${fixedRate.lag_ms.p99} ms, max ${fixedRate.lag_ms.max} ms (${fixedRate.lag_ms.samples} events); ` +
    `the store grew by **${fixedRate.store_bytes_per_event} bytes per event** (pages in use, the WAL checkpointed into the file, before and after).`);
  const e1Eps = e1.eps;
  console.log(`\nIntake, events stored per second (durable commit, delivery running; batch runs with ${BATCH_CONNECTIONS} clients):\n`);
  console.log('| run | events per request | clients | events/s | ratio to endpoint 1 | server CPU µs per event | p50 ms per request | p99 ms per request | errors | non-2xx | RSS MB |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of [e1, ...batchRows]) {
    console.log(`| ${r.name} | ${r.perRequest} | ${r.connections} | ${Math.round(r.eps)} | ${(r.eps / e1Eps).toFixed(2)} | ${Math.round(cpuUs(r))} | ${r.p50} | ${r.p99} | ` +
      `${r.errors} | ${r.non2xx} | ${r.rssMb} |`);
  }
  console.log(`\nPeak RSS of the service process under intake (all runs above): ${intakePeakRss} MB.`);
  console.log(`Backlog drain: ${drained.events} stored events (x ${TYPES.length} destinations) delivered in ${drained.seconds} s from the server's start: ` +
    `${drained.events_per_second} events/s, ${drained.native_per_second} native events/s; peak RSS ${drained.peak_rss_mb} MB; ` +
    `server CPU ${drained.server_cpu_ms_per_event.toFixed(2)} ms per event (all threads, start-up included)` +
    `${drained.native < drained.events * TYPES.length ? ` (INCOMPLETE: ${drained.native} native events)` : ''}.`);
  const freePerEvent = Math.round(drained.free_bytes_after / drained.events);
  console.log(`Store after the drain: **${drained.store_bytes_per_event - freePerEvent} bytes per event** in use for ${TYPES.length} destinations ` +
    `(the SQLite file and its WAL grew by ${drained.store_bytes_per_event} bytes per event from before the ${drained.events} events were stored to after ` +
    `their drain, the server stopped, of which ${freePerEvent} are free pages: the backlog's items, deleted as it was delivered, for new rows to reuse; ` +
    `${drained.store_bytes_per_event_running} bytes per event while it still ran, its WAL then ${(drained.wal_bytes_running / 1048576).toFixed(1)} MB).`);
  console.log(`\nOverload (back-pressure): INTAKE_MAX_PENDING=${over.bound}, the write lock held by another connection and ${over.waiting} events ` +
    `waiting for it; then ${over.connections} keep-alive clients send endpoint-1 events back to back for ${over.window_ms} ms (unique ids):\n`);
  console.log('| refused 503 | with Retry-After | other answers | refusals/s | p50 ms | p99 ms | max ms | waiting events stored once the lock went |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
  console.log(`| ${over.refused} | ${over.refused_with_retry_after} | ${over.other} | ${over.refused_per_second} | ${over.refused_p50_ms} | ${over.refused_p99_ms} | ` +
    `${over.refused_max_ms} | ${over.stored_after} of ${over.waiting} |`);
  console.log(`\nIdentifier hashing, ${HASH_USERS} users (~9 fields each), inline vs the worker pool:\n`);
  console.log(hashingTable(hashing));
  if (options.json !== null) {
    const figures = {
      duration_s: DURATION, connections: CONNECTIONS,
      bare_rounds: bareRounds.map((b) => ({ rps: Math.round(b.rps), cpu_us_per_request: Math.round(cpuUs(b)), p50_ms: b.p50, p99_ms: b.p99, p999_ms: b.p999, rss_mb: b.rssMb })),
      runs: rows.map((r) => ({
        name: r.name, rps: Math.round(r.rps),
        cpu_us_per_event: Math.round(cpuUs(r)),
        ...(r.bare ? {
          bare_rps: Math.round(r.bare.rps), ratio_to_bare: Math.round(ratio(r) * 100) / 100, p99_ratio_to_bare: Math.round(p99Ratio(r) * 100) / 100,
          bare_cpu_us_per_request: Math.round(cpuUs(r.bare)), cpu_ratio_to_bare: Math.round(cpuRatio(r) * 10) / 10,
        } : {}),
        events_per_request: r.perRequest, connections: r.connections, events_per_second: Math.round(r.eps),
        events_ratio_to_endpoint_1: Math.round((r.eps / e1Eps) * 100) / 100,
        p50_ms: r.p50, p99_ms: r.p99, p999_ms: r.p999, errors: r.errors, non_2xx: r.non2xx, rss_mb: r.rssMb,
      })),
      end_to_end: endToEnd,
      end_to_end_fixed_rate: fixedRate,
      intake_peak_rss_mb: intakePeakRss,
      drain: drained,
      overload: over,
      hashing: hashing.map((h) => ({ mode: h.mode, users: h.items, us_per_user: Math.round((h.ms * 10_000) / h.items) / 10 })),
    };
    writeFileSync(options.json, `${JSON.stringify(figures, null, 2)}\n`);
    console.log(`\nfigures written to ${options.json}`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
