// `npm run bench:stream [-- --json FILE]`: how closely the admin API's live stream follows
// intake. The real server (spawned, delivery running to four loopback doubles) takes
// endpoint-1 load with unique event ids (BENCH_SECONDS, BENCH_CONNECTIONS) while one client
// reads GET /admin/stream; it prints the events acknowledged, the stream messages received,
// any overflow notices, and the delay from each event's commit (acked_at) to its arrival
// at the client: p50, p99, max.
import autocannon from 'autocannon';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/open-store.ts';
import { benchAccount, checkout, startDoubles, startServer, stop } from './payloads.ts';

const TYPES = ['ga4', 'meta-capi', 'tiktok', 'webhook'];
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const TOKEN = 'bench-admin-token-0123456789abcdef';


const pct = (sorted: number[], p: number): number => sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

async function main(): Promise<void> {
  const jsonAt = process.argv.indexOf('--json');
  const dataDir = mkdtempSync(join(tmpdir(), 'tl-stream-'));
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ALLOW_PRIVATE_DESTINATIONS: '1', ADMIN_TOKEN: TOKEN, DATABASE_URL: '' };
  const doubles = await startDoubles(TYPES);
  const store = await openStore(loadConfig(env));
  const { scriptId, accessToken } = await benchAccount(store, 'Bench', { doubles, country: 'RO' });
  await store.close();
  const { child, port } = await startServer(env);
  const base = `http://127.0.0.1:${port}`;

  const delays: number[] = [];
  let overflows = 0;
  let missed = 0;
  const ctrl = new AbortController();
  const res = await fetch(`${base}/admin/stream?script_id=${scriptId}`, { headers: { authorization: `Bearer ${TOKEN}` }, signal: ctrl.signal });
  const reading = (async () => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      const now = Date.now();
      buf += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const data = block.split('\n').find((l) => l.startsWith('data: '))?.slice(6);
        if (block.startsWith('event: intake') && data) delays.push(now - (JSON.parse(data) as { acked_at: number }).acked_at);
        else if (block.startsWith('event: overflow') && data) {
          overflows++;
          missed += (JSON.parse(data) as { missed: number }).missed;
        }
      }
    }
  })().catch(() => undefined);

  let seq = 0;
  const result = await autocannon({
    url: `${base}/webhooks/service/event?id=${scriptId}`,
    method: 'POST',
    connections: CONNECTIONS,
    duration: DURATION,
    headers: { 'content-type': 'application/json', 'x-service-access-token': accessToken },
    requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify(checkout(`STREAM-${++seq}`)) }) }],
  });
  const acked = result['2xx'];
  // Wait until the stream has caught up with every acknowledged event (or 10 s).
  const until = Date.now() + 10_000;
  while (delays.length + missed < acked && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  ctrl.abort();
  await reading;
  await stop(child);
  for (const d of doubles.values()) await d.close();
  rmSync(dataDir, { recursive: true, force: true });

  const sorted = [...delays].sort((a, b) => a - b);
  const figures = {
    seconds: DURATION, connections: CONNECTIONS, acked, ackedPerSecond: Math.round(acked / DURATION),
    streamed: delays.length, overflowNotices: overflows, missed,
    delayMs: { p50: pct(sorted, 0.5), p99: pct(sorted, 0.99), max: sorted[sorted.length - 1] ?? NaN },
  };
  console.log('\n| live stream under endpoint-1 load | value |\n|---|---|');
  console.log(`| events acknowledged | ${acked} (${figures.ackedPerSecond}/s, ${CONNECTIONS} connections, ${DURATION} s) |`);
  console.log(`| messages received by the stream client | ${delays.length} (${missed} reported missed in ${overflows} overflow notices) |`);
  console.log(`| commit → client delay p50 / p99 / max | ${figures.delayMs.p50} / ${figures.delayMs.p99} / ${figures.delayMs.max} ms |`);
  if (jsonAt > 0 && process.argv[jsonAt + 1]) writeFileSync(process.argv[jsonAt + 1], JSON.stringify(figures, null, 2));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
