// The overload row of `npm run bench`: back-pressure when the intake queue is full, run
// against a server of its own so the write lock it holds cannot disturb the other runs.
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { loadConfig } from '../../src/config.ts';
import { openStore, sqliteFile } from '../../src/store/open-store.ts';
import { benchAccount, checkout, SERVER_ARGS, stop, waitListening } from './payloads.ts';
export interface Overload {
  bound: number; waiting: number; window_ms: number; connections: number; refused: number; refused_with_retry_after: number; other: number;
  refused_per_second: number; refused_p50_ms: number; refused_p99_ms: number; refused_max_ms: number; stored_after: number;
}

/**
 * Back-pressure: the write lock held by another connection and `bound + 1` events sent so
 * the intake queue is full (one commit in flight, `bound` waiting); then `connections`
 * keep-alive clients send endpoint-1 events (unique ids) back to back for `windowMs`: each
 * should be refused at once, 503 + Retry-After. The window ends well inside the writer's
 * 1 s busy timeout, so the lock goes before the commit in flight gives up, and every waiting
 * event must then be stored.
 */
export async function overload(bound: number, windowMs: number, connections: number): Promise<Overload> {
  const dir = mkdtempSync(join(tmpdir(), 'tl-overload-'));
  const env = { ...process.env, DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', INTAKE_MAX_PENDING: String(bound), MAX_CONNECTIONS_PER_ADDRESS: '1000' };
  const config = loadConfig(env);
  const store = await openStore(config);
  const { scriptId, accessToken } = await benchAccount(store, 'Overload');
  await store.close();
  const server = spawn(process.execPath, [...SERVER_ARGS], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await waitListening(server, /"url":"http:\/\/[^:]+:(\d+)"/);
  server.stdout!.resume();
  const origin = `http://127.0.0.1:${port}`;
  const path = `/webhooks/service/event?id=${scriptId}`;
  const headers = { 'content-type': 'application/json', 'x-service-access-token': accessToken };
  const fillers = new Pool(origin, { connections: bound + 1 });
  const clients = new Pool(origin, { connections });
  // Connections opened before the lock is taken, so the window measures answers, not handshakes.
  await Promise.all(Array.from({ length: connections }, (_, i) => clients.request({ path, method: 'POST', headers, body: JSON.stringify(checkout(`WARM-${i}`)) }).then((r) => r.body.dump())));
  const locker = new Database(sqliteFile(config));
  locker.exec('BEGIN IMMEDIATE');
  const post = (pool: Pool, id: string) => pool.request({ path, method: 'POST', headers, body: JSON.stringify(checkout(id)) });
  // Fill the queue: one event whose commit is then in flight (stuck on the lock), and `bound`
  // more that wait behind it (arriving together, they would all have joined that first commit).
  const wait = (i: number) => post(fillers, `WAIT-${i}`).then(async (r) => { await r.body.dump(); return r.statusCode; });
  const waiting = [wait(0)];
  await new Promise((r) => setTimeout(r, 50));
  for (let i = 1; i <= bound; i++) waiting.push(wait(i));
  // Probe with a wrong token until the queue is full: such a request is never queued itself
  // (refused 503 at the door once full, else 401), so probing cannot add to the wait.
  for (let i = 0; ; i++) {
    const r = await clients.request({ path, method: 'POST', headers: { ...headers, 'x-service-access-token': 'probe' }, body: '{}' });
    await r.body.dump();
    if (r.statusCode === 503) break;
    if (i > 1_000) throw new Error('the intake queue never filled');
  }
  const answers: { status: number; ms: number; retryAfter: boolean }[] = [];
  const until = performance.now() + windowMs;
  let seq = 0;
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < until) {
      const t0 = performance.now();
      const r = await post(clients, `OVER-${++seq}`);
      await r.body.dump();
      answers.push({ status: r.statusCode, ms: performance.now() - t0, retryAfter: r.headers['retry-after'] !== undefined });
    }
  }));
  locker.exec('ROLLBACK');
  locker.close();
  const statuses = await Promise.all(waiting);
  await Promise.all([fillers.close(), clients.close()]);
  await stop(server);
  rmSync(dir, { recursive: true, force: true });
  const refused = answers.filter((a) => a.status === 503).map((a) => a.ms).sort((x, y) => x - y);
  const at = (p: number) => Math.round((refused[Math.min(refused.length - 1, Math.floor(p * refused.length))] ?? NaN) * 10) / 10;
  return {
    bound, waiting: bound + 1, window_ms: windowMs, connections, refused: refused.length,
    refused_with_retry_after: answers.filter((a) => a.status === 503 && a.retryAfter).length, other: answers.length - refused.length,
    refused_per_second: Math.round((refused.length * 1_000) / windowMs), refused_p50_ms: at(0.5), refused_p99_ms: at(0.99),
    refused_max_ms: Math.round((refused[refused.length - 1] ?? NaN) * 10) / 10, stored_after: statuses.filter((s) => s === 200).length,
  };
}
