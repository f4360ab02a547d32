// `npm run bench -- --ref <commit>` (or BENCH_REF): the bench's figures, each measured
// alternately on this tree and on a build of <commit> (reference.ts), current then reference,
// BENCH_REF_PAIRS times (ABAB…), every run right after a bare-Koa round of its own. Each side
// has its own SQLite data folder, accounts (made by its own code), destination doubles and
// server, started once and kept for the HTTP figures; the backlog drain starts a fresh server
// per run. Printed: each figure's median on either side, its ratio to the reference (the
// median of the pairs' ratios, and each pair's) and each side's ratio to bare Koa. The rows
// that need this tree's code in-process (overload, identifier hashing) are left to a plain
// `npm run bench`.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DestinationDouble } from '../helpers/destination-double.ts';
import { drainBacklog } from './drain.ts';
import { BATCH_CONNECTIONS, CONNECTIONS, cpuUs, DRAIN_EVENTS, DURATION, E2E_EVENTS, load, nativeCount, nativeDelivered, TYPES, type Row } from './load.ts';
import { cpuSeconds, startDoubles, startServer, stop, waitListening } from './payloads.ts';
import { alternation, comparisonTable, currentSide, prepareReference, sideSetup, type BenchOptions, type Compared, type Side, type SideName } from './reference.ts';

/** One side's running server and what it serves. */
interface Serving {
  side: Side;
  server: ChildProcess;
  base: string;
  dataDir: string;
  doubles: Map<string, DestinationDouble>;
  plain: { scriptId: string; accessToken: string };
  withDest: { scriptId: string; accessToken: string };
}

async function serve(side: Side): Promise<Serving> {
  const dataDir = mkdtempSync(join(tmpdir(), `tl-bench-${side.name}-`));
  const env = { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ALLOW_PRIVATE_DESTINATIONS: '1' };
  const doubles = await startDoubles(TYPES);
  const [plain, withDest] = await sideSetup<{ scriptId: string; accessToken: string }[]>(side, {
    task: 'accounts', env, accounts: [
      { name: 'Bench' }, { name: 'Bench 4 destinations', doubles: Object.fromEntries([...doubles].map(([t, d]) => [t, d.url])), country: 'RO' },
    ],
  });
  const { child, port } = await startServer(env, side);
  return { side, server: child, base: `http://127.0.0.1:${port}/webhooks/service`, dataDir, doubles, plain, withDest };
}

/** A figure's value from one run on a side, with the bare-Koa figure it is set against. */
interface Measured { values: number[]; bare: number[] }

/** The figures, each a run on one side: its values, in the order of `FIGURES[i].values`. */
const FIGURES: { name: string; values: { figure: string; unit: string; bare: 'cpu' | 'rate' }[]; run: (s: Serving) => Promise<number[]> }[] = [
  {
    name: 'endpoint 2, validation only (no destinations)',
    values: [{ figure: 'endpoint 2, validation only: CPU per request', unit: 'µs', bare: 'cpu' }, { figure: 'endpoint 2, validation only: rate', unit: 'req/s', bare: 'rate' }],
    run: async (s) => {
      const r = await load('endpoint 2 plain', `${s.base}/event/test?id=${s.plain.scriptId}`, { 'x-service-access-token': s.plain.accessToken }, s.server.pid!);
      return [cpuUs(r), r.rps];
    },
  },
  {
    name: 'endpoint 1, durable ack, 4 destinations delivering',
    values: [{ figure: 'endpoint 1, 4 destinations delivering: CPU per request', unit: 'µs', bare: 'cpu' }, { figure: 'endpoint 1: rate', unit: 'req/s', bare: 'rate' }],
    run: async (s) => {
      const before = nativeCount(s.doubles);
      const r = await load('endpoint 1', `${s.base}/event?id=${s.withDest.scriptId}`, { 'x-service-access-token': s.withDest.accessToken }, s.server.pid!);
      await nativeDelivered(s.doubles, before + r.ok * TYPES.length); // the next run starts with nothing left to deliver
      return [cpuUs(r), r.rps];
    },
  },
  {
    name: 'end to end',
    values: [{ figure: `end to end (${E2E_EVENTS} events, 4 destinations): CPU per event`, unit: 'µs', bare: 'cpu' }, { figure: 'end to end: events delivered', unit: 'events/s', bare: 'rate' }],
    run: async (s) => {
      const before = nativeCount(s.doubles);
      const started = performance.now();
      const cpu0 = cpuSeconds(s.server.pid!);
      const r = await load('end to end', `${s.base}/event?id=${s.withDest.scriptId}`, { 'x-service-access-token': s.withDest.accessToken }, s.server.pid!, { amount: E2E_EVENTS });
      const delivered = (await nativeDelivered(s.doubles, before + r.ok * TYPES.length)) - before;
      const seconds = (performance.now() - started) / 1000;
      return [((cpuSeconds(s.server.pid!) - cpu0) * 1e6) / Math.max(1, r.ok), delivered / TYPES.length / seconds];
    },
  },
  {
    name: 'endpoint 2 with 4 destinations (preview)',
    values: [{ figure: 'endpoint 2, 4 destinations: CPU per request', unit: 'µs', bare: 'cpu' }],
    run: async (s) => [cpuUs(await load('endpoint 2 with 4', `${s.base}/event/test?id=${s.withDest.scriptId}`, { 'x-service-access-token': s.withDest.accessToken }, s.server.pid!))],
  },
  {
    name: 'batch intake, 100 events per request',
    values: [{ figure: `batch intake, 100 events per request (${BATCH_CONNECTIONS} clients): CPU per event`, unit: 'µs', bare: 'cpu' }],
    run: async (s) => {
      const before = nativeCount(s.doubles);
      const r = await load('batch 100', `${s.base}/events?id=${s.withDest.scriptId}`, { 'x-service-access-token': s.withDest.accessToken }, s.server.pid!, { batch: 100, connections: BATCH_CONNECTIONS });
      await nativeDelivered(s.doubles, before + r.ok * 100 * TYPES.length);
      return [cpuUs(r)];
    },
  },
];

export async function runAgainst(options: BenchOptions): Promise<void> {
  const ref = prepareReference(options.ref!);
  const current = currentSide();
  const servings: Serving[] = [];
  let bare: ChildProcess | undefined;
  try {
    bare = spawn(process.execPath, ['--import', 'tsx', 'test/bench/bare-koa.ts'], { env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'pipe', 'inherit'] });
    const barePort = await waitListening(bare, /listening (\d+)/);
    const bareRound = () => load('bare Koa (baseline)', `http://127.0.0.1:${barePort}/`, {}, bare!.pid!);
    const sides: Record<SideName, Side> = { current, reference: ref };
    const served = { current: await serve(current), reference: await serve(ref) };
    servings.push(served.current, served.reference);

    const measured = new Map<string, Record<SideName, Measured>>();
    const record = (figure: string, side: SideName, value: number, bareValue: number) => {
      let m = measured.get(figure);
      if (!m) measured.set(figure, (m = { current: { values: [], bare: [] }, reference: { values: [], bare: [] } }));
      m[side].values.push(value);
      m[side].bare.push(bareValue);
    };
    const bareOf = (round: Row, kind: 'cpu' | 'rate') => (kind === 'cpu' ? cpuUs(round) : round.rps);
    const units = new Map<string, string>();
    for (const f of FIGURES) {
      for (const { pair, side } of alternation(options.pairs)) {
        process.stderr.write(`${f.name}: pair ${pair + 1} of ${options.pairs}, ${side} (${sides[side].label})\n`);
        const round = await bareRound();
        const values = await f.run(served[side]);
        f.values.forEach((v, i) => {
          units.set(v.figure, v.unit);
          record(v.figure, side, values[i], bareOf(round, v.bare));
        });
      }
    }
    for (const s of servings.splice(0)) await closeServing(s);
    // The drain: a fresh server per run, on a backlog its own code stored.
    const drainFigures = [`backlog drain (${DRAIN_EVENTS} events, 4 destinations): CPU per event, start-up included`, 'backlog drain: events delivered'];
    units.set(drainFigures[0], 'µs').set(drainFigures[1], 'events/s');
    for (const { pair, side } of alternation(options.pairs)) {
      process.stderr.write(`backlog drain: pair ${pair + 1} of ${options.pairs}, ${side} (${sides[side].label})\n`);
      const round = await bareRound();
      const d = await drainBacklog(DRAIN_EVENTS, TYPES, sides[side]);
      record(drainFigures[0], side, d.server_cpu_ms_per_event * 1000, cpuUs(round));
      record(drainFigures[1], side, d.events_per_second, round.rps);
    }

    const rows: Compared[] = [...measured].map(([figure, m]) => ({
      figure, unit: units.get(figure)!, current: m.current.values, reference: m.reference.values, bareCurrent: m.current.bare, bareReference: m.reference.bare,
    }));
    console.log(`\nAgainst the reference: this tree (${current.label}) and ${ref.commit.slice(0, 12)} (${ref.built ? 'built' : 'no build script: its sources'}; ` +
      `node_modules ${ref.nodeModules === 'linked' ? 'this tree\'s, the lock files being the same' : 'installed by npm ci'}), each figure measured ${options.pairs} time${options.pairs === 1 ? '' : 's'} on each side, ` +
      `alternately (current, reference, current, …), every run right after a bare-Koa round of its own; ${DURATION} s × ${CONNECTIONS} connections per HTTP run, ` +
      'unique event ids; CPU: the server process\'s, every thread, from /proc. A ratio below 1 is less CPU per event or fewer requests per second than the reference ' +
      '(for rates, above 1 is faster); ÷ bare Koa: each figure against the bare-Koa round just before it.\n');
    console.log(comparisonTable(rows, { current: current.label, reference: ref.label }));
    if (options.json !== null) {
      writeFileSync(options.json, `${JSON.stringify({ current: current.label, reference: ref.commit, pairs: options.pairs, built: ref.built, node_modules: ref.nodeModules, figures: rows }, null, 2)}\n`);
      console.log(`\nfigures written to ${options.json}`);
    }
  } finally {
    for (const s of servings) await closeServing(s);
    if (bare) await stop(bare);
    ref.close();
  }
}

async function closeServing(s: Serving): Promise<void> {
  await stop(s.server);
  for (const d of s.doubles.values()) await d.close();
  rmSync(s.dataDir, { recursive: true, force: true });
}
