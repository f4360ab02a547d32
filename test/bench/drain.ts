// The backlog-drain row of `npm run bench`, and the store's bytes per event it leaves: a
// fixed number of events stored, delivered to four destinations, then the SQLite file and
// its WAL weighed against what they were before the events (issue 34 tracks that figure).
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { sqliteFile } from '../../src/store/open-store.ts';
import { cpuSeconds, nativeEvents, peakRssMb, startDoubles, stop, waitListening } from './payloads.ts';
import { currentSide, sideSetup, type Side } from './reference.ts';

export interface Drain {
  events: number; native: number; seconds: number; events_per_second: number; native_per_second: number; peak_rss_mb: number; server_cpu_ms_per_event: number;
  /** (database file + WAL) growth ÷ events, from before the events were stored to after the drain with the server stopped. */
  store_bytes_per_event: number;
  /** The same growth with the server still running, once every native event arrived, and its WAL then. */
  store_bytes_per_event_running: number; wal_bytes_running: number;
  /** Of the file after the drain, the bytes in free pages (rows deleted since, reused by later writes before the file grows). */
  free_bytes_after: number;
}

/** Bytes in the database file's free pages. */
function freeBytes(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return Number(db.pragma('freelist_count', { simple: true })) * Number(db.pragma('page_size', { simple: true }));
  } finally {
    db.close();
  }
}

/**
 * The bytes a running server's SQLite database holds in pages: its WAL checkpointed into the
 * file first (PASSIVE, from a connection of our own: the server's connections keep going), so
 * the figure does not swing with the WAL's size. Free pages are not counted.
 */
export function checkpointedBytes(file: string): number {
  const db = new Database(file);
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    const pages = Number(db.pragma('page_count', { simple: true })) - Number(db.pragma('freelist_count', { simple: true }));
    return pages * Number(db.pragma('page_size', { simple: true }));
  } finally {
    db.close();
  }
}

/** The SQLite database file and its WAL, in bytes (a file that is not there weighs 0). */
function storeBytes(file: string): { db: number; wal: number } {
  const size = (f: string) => (existsSync(f) ? statSync(f).size : 0);
  return { db: size(file), wal: size(`${file}-wal`) };
}

/**
 * A backlog, as after an outage of every destination: `n` accepted checkout events stored
 * before the server starts, for an account with the `types` destinations; then the time from
 * spawning the server until the doubles hold every native event, the server's peak RSS and
 * CPU, and the store's growth per event. `side`: the checkout whose code stores the events
 * and serves them (default this tree; a reference build with `--ref`).
 */
export async function drainBacklog(n: number, types: readonly string[], side: Side = currentSide()): Promise<Drain> {
  const dir = mkdtempSync(join(tmpdir(), 'tl-drain-'));
  const env = { ...process.env, DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ALLOW_PRIVATE_DESTINATIONS: '1' };
  const file = sqliteFile(loadConfig(env));
  const doubles = await startDoubles(types);
  const [account] = await sideSetup<{ scriptId: string }[]>(side, {
    task: 'accounts', env, accounts: [{ name: 'Drain', doubles: Object.fromEntries([...doubles].map(([t, d]) => [t, d.url])), country: 'RO' }],
  });
  // Weighed closed (its WAL checkpointed into the file), with the schema and the account: what the events add is measured from here.
  const empty = storeBytes(file);
  await sideSetup(side, { task: 'backlog', env, scriptId: account.scriptId, events: n });
  const started = performance.now();
  const server = spawn(process.execPath, [...side.serverArgs], { env, cwd: side.root, stdio: ['ignore', 'pipe', 'inherit'] });
  await waitListening(server, /"url":"http:\/\/[^:]+:(\d+)"/);
  server.stdout!.resume();
  const expected = n * types.length;
  let native = 0;
  const deadline = Date.now() + 600_000;
  while (native < expected && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    native = types.reduce((sum, t) => sum + nativeEvents(t, doubles.get(t)!), 0);
  }
  const seconds = (performance.now() - started) / 1000;
  const peak = peakRssMb(server.pid!);
  const cpu = cpuSeconds(server.pid!);
  const running = storeBytes(file);
  await stop(server);
  const stopped = storeBytes(file);
  const free = freeBytes(file);
  for (const d of doubles.values()) await d.close();
  rmSync(dir, { recursive: true, force: true });
  const perEvent = (b: { db: number; wal: number }) => Math.round((b.db + b.wal - empty.db - empty.wal) / n);
  return {
    events: n, native, seconds: Math.round(seconds * 10) / 10, events_per_second: Math.round(native / types.length / seconds),
    native_per_second: Math.round(native / seconds), peak_rss_mb: peak,
    server_cpu_ms_per_event: Math.round((cpu * 1000 / n) * 100) / 100,
    store_bytes_per_event: perEvent(stopped), store_bytes_per_event_running: perEvent(running), wal_bytes_running: running.wal,
    free_bytes_after: free,
  };
}
