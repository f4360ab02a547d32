// `node --import tsx test/bench/drain-instructions.ts [events] [-- --ref <commit>]`: the
// machine instructions a backlog costs to deliver, counted by valgrind's callgrind in the real
// server (four loopback destinations: ga4, meta-capi, tiktok, webhook), per thread. Timings of
// the drain move by tens of per cent with this machine's load; instruction counts do not.
//
// The server starts uninstrumented; once it listens and has settled, counting starts, then
// `events` (default 2,000) accepted checkout events are stored by another process (each side's
// own code, side-setup.ts), as a CLI or another instance would, and counting stops once the
// doubles hold every native event. Start-up is not counted (the bench's drain figure includes
// it); the delivery thread's first events run before the JIT has optimised them, so use enough
// events for that to be small: two 1,000-event counts of the same build have differed by 23 %
// at a load average near 20 (docs/performance.md, "Delivery CPU"). With `--ref`, the same on a build of that commit first, then
// this tree, and each count as a ratio to the reference. Takes several minutes per side.
// Only user-space instructions are counted: what a change saves in system calls does not show.
// DRAIN_KEEP_CALLGRIND=1 keeps callgrind's files (their folder is printed) for callgrind_annotate.
import Database from 'better-sqlite3';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nativeEvents, startDoubles, waitListening } from './payloads.ts';
import { instructionsByThread } from './callgrind.ts';
import { benchOptions, currentSide, prepareReference, sideSetup, type Side } from './reference.ts';

const TYPES = ['ga4', 'meta-capi', 'tiktok', 'webhook'];
const positional = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !(all[i - 1] ?? '').startsWith('--'));
const N = Number(positional[0] ?? 2_000);
const options = benchOptions(process.argv.slice(2).filter((a) => !positional.includes(a)), process.env);

interface Counted { side: string; byThread: Map<number, number>; total: number; mix: string }

async function count(side: Side): Promise<Counted> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tl-drain-instr-'));
  const outDir = mkdtempSync(join(tmpdir(), 'tl-callgrind-'));
  // The watchdog would take a delivery thread slowed down by valgrind for a stuck one and restart it.
  const env = { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ALLOW_PRIVATE_DESTINATIONS: '1', DELIVERY_WATCHDOG_MS: '600000' };
  const doubles = await startDoubles(TYPES);
  const [account] = await sideSetup<{ scriptId: string }[]>(side, {
    task: 'accounts', env, accounts: [{ name: 'Drain', doubles: Object.fromEntries([...doubles].map(([t, d]) => [t, d.url])), country: 'RO' }],
  });
  const server = spawn('valgrind', ['--tool=callgrind', '--separate-threads=yes', '--instr-atstart=no', `--callgrind-out-file=${outDir}/cg.%p`,
    process.execPath, ...side.serverArgs], { env, cwd: side.root, stdio: ['ignore', 'pipe', 'pipe'] });
  server.stderr!.resume();
  await waitListening(server, /"url":"http:\/\/[^:]+:(\d+)".*tracklane listening/);
  server.stdout!.resume();
  // Lanes started, first polls done.
  await new Promise((r) => setTimeout(r, 5_000));
  const control = (...args: string[]) => execFileSync('callgrind_control', [...args, String(server.pid)], { env, stdio: 'ignore' });
  control('--instr=on');
  control('--zero');
  await sideSetup(side, { task: 'backlog', env, scriptId: account.scriptId, events: N });
  const expected = N * TYPES.length;
  const deadline = Date.now() + 3_600_000;
  for (let got = 0, said = Date.now(); got < expected && Date.now() < deadline;) {
    await new Promise((r) => setTimeout(r, 500));
    got = TYPES.reduce((sum, t) => sum + nativeEvents(t, doubles.get(t)!), 0);
    if (Date.now() - said > 60_000) {
      process.stderr.write(`${side.label}: ${got} of ${expected} native events\n`);
      said = Date.now();
    }
  }
  control('--instr=off');
  control('--dump');
  server.kill('SIGKILL');
  await new Promise((r) => server.once('exit', r));
  for (const d of doubles.values()) await d.close();
  const byThread = instructionsByThread(outDir);
  const mix = pathMix(join(dataDir, 'tracklane.db'));
  rmSync(dataDir, { recursive: true, force: true });
  if (process.env.DRAIN_KEEP_CALLGRIND) process.stderr.write(`${side.label}: callgrind files kept in ${outDir}\n`);
  else rmSync(outDir, { recursive: true, force: true });
  return { side: side.label, byThread, total: [...byThread.values()].reduce((a, b) => a + b, 0), mix };
}

/**
 * Which way the deliveries went (timers in real time decide part of it, and valgrind slows the
 * server ~50-fold): rows per destination type (stored, claimed back or stored in flight), and
 * those delivered without a row, listed on their attempt (a store without that column: not said).
 */
function pathMix(file: string): string {
  let db: Database.Database;
  try {
    db = new Database(file);
  } catch (err) {
    return `delivery rows: not read (${(err as Error).message})`;
  }
  try {
    const rows = db.prepare<[], { t: string; n: number }>('SELECT destination_type AS t, count(*) AS n FROM deliveries GROUP BY 1').all();
    let listed = '';
    try {
      listed = `, ${db.prepare<[], { n: number | null }>('SELECT sum(json_array_length(delivered)) AS n FROM delivery_attempts WHERE delivered IS NOT NULL').get()!.n ?? 0} without`;
    } catch { /* no `delivered` column in that build's schema */ }
    return `delivery rows: ${rows.map((r) => `${r.t} ${r.n}`).join(', ') || 'none'}${listed}`;
  } catch (err) {
    return `delivery rows: not read (${(err as Error).message})`;
  } finally {
    db.close();
  }
}

const k = (n: number) => Math.round(n / N / 1000);
function print(c: Counted, ref?: Counted): void {
  const threads = [...c.byThread].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([t, n]) => `thread ${t} ${k(n)}k`).join(', ');
  const busiest = Math.max(...c.byThread.values());
  const ratio = ref ? ` (÷ reference: all ${(c.total / ref.total).toFixed(2)}, busiest thread ${(busiest / Math.max(...ref.byThread.values())).toFixed(2)})` : '';
  console.log(`${c.side}: ${N} events drained to 4 destinations: ${k(c.total)}k instructions per event, all threads; busiest ${threads}${ratio}; ${c.mix}`);
}

if (options.ref !== null) {
  const ref = prepareReference(options.ref);
  try {
    const r = await count(ref);
    print(r);
    print(await count(currentSide()), r);
  } finally {
    ref.close();
  }
} else {
  print(await count(currentSide()));
}
