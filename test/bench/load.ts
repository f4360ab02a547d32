// What `npm run bench`'s runs share, with or without a reference build (run.ts,
// run-against.ts): one autocannon run against a server with the server's CPU over it, and
// the waits for the destination doubles to hold what was sent.
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import type { DestinationDouble } from '../helpers/destination-double.ts';
import { checkout, cpuSeconds, nativeEvents } from './payloads.ts';

export const TYPES = ['ga4', 'meta-capi', 'tiktok', 'webhook'];
export const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
/** Batch intake runs: the concurrent clients a queueing backend library would use. */
export const BATCH_CONNECTIONS = Number(process.env.BENCH_BATCH_CONNECTIONS ?? 4);
/** The end-to-end run: this many unique events into endpoint 1, closed loop at CONNECTIONS, timed until every native event arrived. */
export const E2E_EVENTS = Number(process.env.BENCH_E2E_EVENTS ?? 20_000);
/** Backlog drain: events stored before the server starts (the figure is 100,000; 20,000 keeps the bench under 3 minutes). */
export const DRAIN_EVENTS = Number(process.env.BENCH_DRAIN_EVENTS ?? 20_000);

/** Native events the doubles have received so far. */
export const nativeCount = (doubles: ReadonlyMap<string, DestinationDouble>): number => TYPES.reduce((n, t) => n + nativeEvents(t, doubles.get(t)!), 0);

/** Native events the doubles have received, once `expected` arrived or after five minutes. */
export async function nativeDelivered(doubles: ReadonlyMap<string, DestinationDouble>, expected: number): Promise<number> {
  const deadline = Date.now() + 300_000;
  let got = nativeCount(doubles);
  while (got < expected && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    got = nativeCount(doubles);
  }
  return got;
}

/** Ack → receipt lag of each event in `acks` at the webhook double (one request per event, carrying the event id), sorted. */
export function lagsOf(webhook: DestinationDouble, acks: ReadonlyMap<string, number>): number[] {
  return webhook.requests.flatMap((q) => {
    const ack = acks.get(q.json<{ id: string }>().id);
    return ack === undefined ? [] : [Math.max(0, q.at - ack)];
  }).sort((a, b) => a - b);
}

/** CPU µs per event of a run (per request but for batch intake). */
export const cpuUs = (r: Row): number => (r.cpu * 1e6) / Math.max(1, r.ok * r.perRequest);

export const percentile = (sorted: readonly number[], p: number): number | null =>
  sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

export interface Row {
  name: string; ok: number; rps: number; p50: number; p99: number; p999: number; errors: number; non2xx: number; rssMb: number;
  /** Events per request (1 but for batch intake) and the events per second that makes. */
  perRequest: number; eps: number; connections: number; note?: string;
  /** CPU seconds the loaded process used during the run, every thread. */
  cpu: number;
  /** The bare-Koa round run just before this one (single-event runs): the ratios' baseline. */
  bare?: Row;
}

let sequence = 0;
/**
 * `acks`: when given, the time each single event's 200 arrived, by event id (one request in
 * flight per connection, so the connection's context carries the id it sent).
 */
export async function load(name: string, url: string, headers: Record<string, string>, pid: number,
  opts: { batch?: number; connections?: number; acks?: Map<string, number>; rate?: number; amount?: number } = {}): Promise<Row> {
  const prefix = name.replace(/\W+/g, '-');
  const connections = opts.connections ?? CONNECTIONS;
  const batch = opts.batch;
  const acks = opts.acks;
  const cpuBefore = cpuSeconds(pid);
  const r = await autocannon({
    url, connections, ...(opts.amount !== undefined ? { amount: opts.amount } : { duration: DURATION }),
    ...(opts.rate !== undefined ? { overallRate: opts.rate } : {}),
    requests: [{
      method: 'POST', headers: { 'content-type': 'application/json', ...headers },
      setupRequest: (req, ctx: object) => {
        const context = ctx as { id?: string };
        if (batch !== undefined) return { ...req, body: JSON.stringify({ batch: Array.from({ length: batch }, () => checkout(`${prefix}-${++sequence}`)) }) };
        const id = `${prefix}-${++sequence}`;
        context.id = id;
        return { ...req, body: JSON.stringify(checkout(id)) };
      },
      onResponse: (status: number, _body: string, ctx: object) => {
        const id = (ctx as { id?: string }).id;
        if (acks && status === 200 && id !== undefined) acks.set(id, Date.now());
      },
    }],
  });
  const cpu = cpuSeconds(pid) - cpuBefore;
  const rss = Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)?.[1] ?? 0) / 1024;
  const perRequest = batch ?? 1;
  return {
    name, ok: r['2xx'], rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, p999: r.latency.p99_9, errors: r.errors + r.timeouts,
    non2xx: r.non2xx, rssMb: Math.round(rss), perRequest, eps: (r['2xx'] * perRequest) / (opts.amount !== undefined ? r.duration : DURATION), connections, cpu,
  };
}
