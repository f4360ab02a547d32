// `npm run bench:fairness -- [seconds] [events/s] [--pg]`: a receiver slower than its traffic that
// refuses every fifth event's first attempt, on the real server. One account, one webhook
// destination (a loopback double answering each request after BENCH_FAIRNESS_LATENCY_MS,
// default 120 ms: with the lane's 8 slots about 65 requests/s), and endpoint 1 offered
// `events/s` (default 150) for `seconds` (default 60), open loop. Every retry's due time is
// read from the store while it waits (the row, refused and not yet claimed again), so each
// retry's lateness is its arrival at the double less that due time, jitter included.
// Prints how many refused events were retried within due + BENCH_FAIRNESS_SLACK_MS (default
// 1 s) before the load stopped, of those whose due + slack came before that, the lateness
// distribution, and how far first attempts lagged (oldest first). `--pg`: on a PostgreSQL
// database of its own (TRACKLANE_TEST_PG_URL's server, as the tests), else SQLite.
import Database from 'better-sqlite3';
import pg from 'pg';
import { Pool } from 'undici';
import { rmSync } from 'node:fs';
import { loadConfig } from '../../src/config.ts';
import { sqliteFile } from '../../src/store/open-store.ts';
import { createTestDatabase } from '../helpers/postgres.ts';
import { benchSetup, checkout, cpuSeconds, startServer, stop } from './payloads.ts';

const ARGS = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const ON_PG = process.argv.includes('--pg');
const SECONDS = Number(ARGS[0] ?? 60);
const RATE = Number(ARGS[1] ?? 150);
const LATENCY_MS = Number(process.env.BENCH_FAIRNESS_LATENCY_MS ?? 120);
const SLACK_MS = Number(process.env.BENCH_FAIRNESS_SLACK_MS ?? 1_000);
/** How often the due times of waiting retries are read (a first retry waits ≥ 8 s unclaimed). */
const POLL_MS = 250;

const refusedFirst = (i: number) => i % 5 === 4;
const indexOf = (id: string) => Number(id.slice(id.lastIndexOf('-') + 1));

const quantile = (sorted: readonly number[], q: number): number => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);
const dist = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const f = (v: number) => `${(v / 1000).toFixed(2)} s`;
  return s.length === 0 ? 'none' : `p50 ${f(quantile(s, 0.5))}, p90 ${f(quantile(s, 0.9))}, p99 ${f(quantile(s, 0.99))}, max ${f(s[s.length - 1])} (${s.length})`;
};

/** Reads the due time of every first retry waiting unclaimed, by event id. */
function dueReader(env: NodeJS.ProcessEnv): { read(): Promise<{ event_id: string; due: number }[]>; close(): Promise<void> } {
  const sql = `SELECT event_id, next_attempt_at AS due FROM deliveries WHERE status = 'pending' AND attempts = 1 AND lease_owner IS NULL`;
  if (env.DATABASE_URL) {
    const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 1 });
    return { read: async () => (await pool.query<{ event_id: string; due: string }>(sql)).rows.map((r) => ({ event_id: r.event_id, due: Number(r.due) })), close: () => pool.end() };
  }
  let db: Database.Database | undefined;
  return {
    async read() {
      db ??= new Database(sqliteFile(loadConfig(env)), { readonly: true });
      return db.prepare<[], { event_id: string; due: number }>(sql).all();
    },
    async close() {
      db?.close();
    },
  };
}

async function main(): Promise<void> {
  const db = ON_PG ? await createTestDatabase() : undefined;
  if (db !== undefined) process.env.DATABASE_URL = db.url;
  const { dataDir, env, doubles, account } = await benchSetup('Fairness', ['webhook'], true);
  const webhook = doubles.get('webhook')!;
  const attempted = new Set<string>();
  webhook.otherwise((req) => {
    const id = String(req.json<{ id: string }>().id);
    const first = !attempted.has(id);
    attempted.add(id);
    return { status: first && refusedFirst(indexOf(id)) ? 503 : 200, body: {}, delayMs: LATENCY_MS };
  });
  const { child, port } = await startServer(env);
  const client = new Pool(`http://127.0.0.1:${port}`, { connections: 32 });
  const path = `/webhooks/service/event?id=${account.scriptId}`;
  const headers = { 'content-type': 'application/json', 'x-service-access-token': account.accessToken };
  const acked = new Map<string, number>();
  const due = new Map<string, number>();
  const reader = dueReader(env);
  let loading = true;
  const polling = (async () => {
    while (loading) {
      for (const r of await reader.read()) if (!due.has(r.event_id)) due.set(r.event_id, r.due);
      await new Promise((res) => setTimeout(res, POLL_MS));
    }
  })();

  // Open loop: the events due by now are sent, whatever the answers so far.
  const cpuBefore = cpuSeconds(child.pid!);
  const start = Date.now();
  const total = Math.round(SECONDS * RATE);
  const inFlight: Promise<void>[] = [];
  let sent = 0;
  let failed = 0;
  while (sent < total) {
    const target = Math.min(total, Math.floor(((Date.now() - start) / 1000) * RATE) + 1);
    for (; sent < target; sent++) {
      const id = `FAIR-${sent}`;
      inFlight.push(client.request({ path, method: 'POST', headers, body: JSON.stringify(checkout(id)) }).then(async (r) => {
        await r.body.dump();
        if (r.statusCode === 200) acked.set(id, Date.now());
        else failed++;
      }, () => void failed++));
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  await Promise.all(inFlight);
  const end = Date.now();
  const cpu = cpuSeconds(child.pid!) - cpuBefore;
  loading = false;
  await polling;

  // What the double saw while the load ran: first attempts and retries, by event id.
  const firstAt = new Map<string, number>();
  const retryAt = new Map<string, number>();
  for (const q of webhook.requests) {
    if (q.at > end) break;
    const id = String(q.json<{ id: string }>().id);
    if (!firstAt.has(id)) firstAt.set(id, q.at);
    else if (!retryAt.has(id)) retryAt.set(id, q.at);
  }
  const refused = [...firstAt.keys()].filter((id) => refusedFirst(indexOf(id)));
  const eligible = refused.filter((id) => due.has(id) && due.get(id)! + SLACK_MS <= end);
  const onTime = eligible.filter((id) => retryAt.has(id) && retryAt.get(id)! <= due.get(id)! + SLACK_MS);
  const lateness = eligible.map((id) => (retryAt.get(id) ?? end) - due.get(id)!);
  const notRetried = eligible.filter((id) => !retryAt.has(id)).length;
  const firstLag = [...firstAt].flatMap(([id, at]) => (acked.has(id) ? [at - acked.get(id)!] : []));
  const newestFirst = Math.max(...[...firstAt.keys()].map(indexOf));
  const skipped = Array.from({ length: newestFirst }, (_, i) => `FAIR-${i}`).filter((id) => !firstAt.has(id) && acked.has(id)).length;

  const during = webhook.requests.filter((q) => q.at >= start && q.at <= end);
  const perSecond = during.length / ((end - start) / 1000);
  const store = env.DATABASE_URL ? 'PostgreSQL' : 'SQLite';
  console.log(`fairness (${store}): ${sent} events offered at ${RATE}/s over ${((end - start) / 1000).toFixed(1)} s (${failed} not acknowledged); ` +
    `receiver ${LATENCY_MS} ms per request, every fifth first attempt refused (503)`);
  console.log(`  requests the receiver got during the load: ${during.length} (${perSecond.toFixed(1)}/s); server CPU ${cpu.toFixed(1)} s`);
  console.log(`  first attempts during the load: ${firstAt.size} (newest #${newestFirst}; older ones never attempted: ${skipped}); ack → first attempt ${dist(firstLag)}`);
  console.log(`  refused during the load: ${refused.length}; due + ${SLACK_MS} ms before the load stopped: ${eligible.length}`);
  console.log(`  retried within due + ${SLACK_MS} ms: ${onTime.length} of ${eligible.length}; not retried at all before the load stopped: ${notRetried}`);
  console.log(`  retry lateness after due (not retried: counted to the end of the load): ${dist(lateness)}`);

  await client.close();
  await reader.close();
  await stop(child);
  await webhook.close();
  rmSync(dataDir, { recursive: true, force: true });
  await db?.drop();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
