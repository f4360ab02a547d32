// `npm run bench:crash [-- --runs N] [--backlog N] [--kill-on TYPE] [--json FILE]`: the crash window. Three instances on one
// PostgreSQL database, four loopback destinations (ga4, meta-capi, tiktok, webhook), load with
// unique event ids spread over the instances (a refused or broken request is tried on the
// next, as a load balancer would); one instance is killed with SIGKILL half way through and
// started again (it releases the dead process's leases at once, as a restarted unit does).
// Once every accepted event has reached every destination and nothing is pending, it prints
// accepted, delivered, lost (must be 0) and, per destination, the native events sent again
// (same dedup key: the webhook's `webhook-id`, Meta/TikTok `event_id`, GA4 `transaction_id`)
// and how long before the kill their first copy had been received. The instance killed is the
// one holding the most leases at that moment (a busy one), or with --kill-on the sender of that
// destination's request; what it held when it died (events in the dispatch queue and deliveries
// leased to it) is printed too, and for each event sent again whether its first copy was
// recorded as delivered when the killed process was gone (one that was: a bug).
import pg from 'pg';
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { SPEC_EVENT_NAMES } from '../../src/accounts/types.ts';
import { loadConfig } from '../../src/config.ts';
import { validateEvent } from '../../src/schema/validate-event.ts';
import type { Store } from '../../src/store/types.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { DestinationDouble, RecordedRequest } from '../helpers/destination-double.ts';
import { createTestDatabase } from '../helpers/postgres.ts';
import { benchAccount, checkout, nativeEvents, startDoubles, startServer, stop } from './payloads.ts';

/** The events after a partition's fan-out cursor (src/store/postgres/fan-out-cursor.ts), events `e` joined to fanout_cursors `c`. */
const AFTER_CURSOR = "(e.seq / 256) % 8 = c.part AND e.status = 'accepted' AND e.fan_xid IS NOT NULL AND (e.fan_xid, e.seq) > (c.cursor_xid, c.cursor_seq)";

const TYPES = ['ga4', 'meta-capi', 'tiktok', 'webhook'] as const;
const LOAD_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 24);
const arg = (name: string) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
};
const RUNS = Number(arg('--runs') ?? 1);
/** `--backlog N`: instead of live intake, N accepted events stored before the instances start; the kill comes when the webhook received half of them. */
const BACKLOG = Number(arg('--backlog') ?? 0);
/**
 * `--kill-on TYPE` (with --backlog): the kill comes when that destination received half of the
 * backlog, and goes to the instance that sent its last request (found by its TCP port), else to
 * the busiest. Default webhook (one
 * event per request, so it advances steadily; a batching destination's few large requests may
 * all land before or after the webhook's half, so its count then depends on the machine).
 */
const KILL_ON = arg('--kill-on') ?? 'webhook';
if (!(TYPES as readonly string[]).includes(KILL_ON)) throw new Error(`--kill-on takes one of ${TYPES.join(', ')}`);

/** `n` accepted checkout events, stored as intake stores them. */
async function storeBacklog(store: Store, scriptId: string, prefix: string, n: number): Promise<string[]> {
  const ctx = { approvedEvents: new Set(SPEC_EVENT_NAMES), defaultTaxRate: 19, host: null };
  const ids: string[] = [];
  for (let i = 0; i < n; i += 1_000) {
    const now = Date.now();
    await store.events.append(Array.from({ length: Math.min(1_000, n - i) }, (_, k) => {
      const id = `${prefix}-${i + k}`;
      ids.push(id);
      const r = validateEvent(checkout(id), ctx);
      return { id: randomUUID(), scriptId, name: 'checkout_completed', eventId: id, status: 'accepted' as const, source: 'event' as const, requestId: 'bench', receivedAt: now, errors: [], warnings: r.warnings, payload: r.event! };
    }));
  }
  return ids;
}

/** Each native event a request carried: its dedup key and the customer's event id. */
export function nativeKeys(type: string, r: RecordedRequest): { key: string; eventId: string }[] {
  const body = r.json<Record<string, any>>();
  if (type === 'webhook') return [{ key: String(r.headers['webhook-id']), eventId: String(body.id) }];
  if (type === 'ga4') {
    return (body.events as { params: { transaction_id: string } }[]).map((e) => ({ key: e.params.transaction_id, eventId: e.params.transaction_id }));
  }
  return (body.data as { event_id: string }[]).map((e) => ({ key: e.event_id, eventId: e.event_id }));
}

/** Which of `pids` has a TCP socket bound to local port `port` (a request's sender: its remotePort), by /proc; undefined when none. */
function pidOfPort(port: number, pids: number[]): number | undefined {
  const inodes = new Set<string>();
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && parseInt(cols[1].split(':')[1], 16) === port) inodes.add(cols[9]);
    }
  }
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m && inodes.has(m[1])) return pid;
      } catch {
        // closed meanwhile
      }
    }
  }
  return undefined;
}

/** Each copy's receipt time, and how many native events the request that carried it held. */
interface Received { eventId: string; at: number[]; size: number[] }

function received(type: string, d: DestinationDouble): Map<string, Received> {
  const m = new Map<string, Received>();
  for (const r of d.requests) {
    const keys = nativeKeys(type, r);
    for (const { key, eventId } of keys) {
      const x = m.get(key);
      if (x === undefined) m.set(key, { eventId, at: [r.at], size: [keys.length] });
      else x.at.push(r.at), x.size.push(keys.length);
    }
  }
  return m;
}

/**
 * The (destination type, event id) pairs the database holds as delivered: a delivered row, or
 * a pair an attempt lists (`delivered`, no row), with how many committed records say so.
 */
async function recordedPairs(sql: pg.Client): Promise<Map<string, number>> {
  const { rows } = await sql.query<{ type: string; event_id: string; n: number }>(`SELECT type, event_id, count(*)::int AS n FROM (
      SELECT d.destination_type AS type, d.event_id FROM deliveries d WHERE d.status = 'delivered'
      UNION ALL
      SELECT dst.type, e.event_id FROM delivery_attempts a CROSS JOIN LATERAL jsonb_array_elements(a.delivered::jsonb) AS p(v)
        JOIN destinations dst ON dst.id = a.destination_id JOIN events e ON e.seq = (p.v->>0)::bigint
      WHERE a.delivered IS NOT NULL AND p.v <> 'null'::jsonb) x GROUP BY 1, 2`);
  return new Map(rows.map((r) => [`${r.type}\0${r.event_id}`, r.n]));
}

interface Resent {
  type: string; n: number; beforeKillMs: number[];
  /**
   * Why, by what the database held: `recorded`, its first copy was recorded as delivered when
   * the killed process was gone (a re-send of a recorded delivery: a bug); `unrecorded`, first
   * copy before the kill and not recorded then (sent or answered, its record not committed);
   * `afterKill`, every copy after the kill. `twiceRecorded`: of them, recorded by two records
   * at the end (both senders committed theirs: neither was the killed process's).
   */
  recorded: number; unrecorded: number; afterKill: number; twiceRecorded: number;
  /** Events in the requests that carried the first copies (unrecorded ones), each size once per request. */
  firstRequests: number[];
}
export interface CrashRun {
  accepted: number; delivered: number; lost: number; resent: Resent[]; total: number;
  killed: { queued: number; leased: number };
  /** Native events each destination (TYPES' order) had received when the kill was sent. */
  progressAtKill: number[];
  /** --kill-on a batching destination: the killed instance had sent its last request. */
  senderFound: boolean;
  /** Per destination: recorded as delivered when the killed process was gone, of the unique events received at the kill. */
  recordedShare: string;
  /** Sent again: at the kill its event was queued, leased to the killed process's fan-out (no row), or its row leased to it. */
  why: { queuedNoRow: number; rowLeased: number; other: number };
}

const percentile = (xs: number[], p: number) => (xs.length === 0 ? 0 : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]);

async function crashRun(run: number): Promise<CrashRun> {
  const db = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'tl-crash-'));
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ALLOW_PRIVATE_DESTINATIONS: '1', DATABASE_URL: db.url };
  const doubles = await startDoubles(TYPES);
  const store = await openStore(loadConfig(env));
  const { scriptId, accessToken } = await benchAccount(store, 'Crash', { doubles, country: 'RO' });
  const live: { child: ChildProcess; port: number }[] = [];
  const all: { child: ChildProcess; port: number }[] = [];
  const orphans = () => all.forEach((s) => s.child.kill('SIGKILL'));
  process.once('exit', orphans);
  for (let i = 0; i < 3; i++) live.push(await startServer(env)), all.push(live[i]);
  // The backlog once all three listen: stored before, the first one up drained most of it alone
  // while the others started (slower the busier the machine), and the kill's timing against
  // the batching destinations' few requests depended on the machine's load.
  const acked = new Set<string>(BACKLOG > 0 ? await storeBacklog(store, scriptId, `crash-${run}-b`, BACKLOG) : []);
  await store.close();
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();

  let n = 0;
  let killAt = 0;
  let killed = { queued: 0, leased: 0 };
  const queuedAtKill = new Set<string>();
  const leasedAtKill = new Set<string>();
  let recordedAtKill = new Map<string, number>();
  /** --kill-on: whether the killed instance was the one that sent the request that crossed half. */
  let senderFound = false;
  /** Native events each destination had received (copies included) when the kill was sent. */
  let progressAtKill: number[] = [];
  /** Per destination: the deliveries recorded as delivered when the killed process was gone, of the unique events received at the kill. */
  let recordedShare = '';
  const started = Date.now();
  const send = async (first: number, id: string) => {
    for (let k = 0; k < live.length; k++) {
      const s = live[(first + k) % live.length];
      try {
        const r = await fetch(`http://127.0.0.1:${s.port}/webhooks/service/event?id=${scriptId}`, {
          method: 'POST', headers: { 'content-type': 'application/json', 'x-service-access-token': accessToken }, body: JSON.stringify(checkout(id)),
        });
        await r.arrayBuffer();
        if (r.status === 200) return void acked.add(id);
      } catch {
        // the killed instance: not acknowledged there, so the next one
      }
    }
  };
  const kill = async (sentFrom?: number) => {
    // The instance holding the most work (queued events and deliveries leased to it), so the kill lands on one busy delivering.
    // None holding any (between claims): looked at again, a few times. `sentFrom`: the port a request just received came
    // from; its sender, found by it, goes first.
    let held: { owner: string; n: number }[] = [];
    const sender = sentFrom === undefined ? undefined : pidOfPort(sentFrom, live.map((s) => s.child.pid!));
    if (sender !== undefined) held = [{ owner: `${hostname()}/${sender}/`, n: 1 }];
    senderFound = sender !== undefined;
    for (let k = 0; k < 200 && held.length === 0; k++) {
      if (k > 0) await new Promise((r) => setTimeout(r, 5));
      ({ rows: held } = await sql.query<{ owner: string; n: number }>(`SELECT split_part(lease_owner, '#', 1) AS owner, count(*)::int AS n FROM (
          SELECT lease_owner FROM dispatch_queue UNION ALL SELECT lease_owner FROM deliveries WHERE status = 'pending'
          UNION ALL SELECT c.lease_owner FROM fanout_cursors c JOIN events e ON ${AFTER_CURSOR}) l
        WHERE lease_owner IS NOT NULL GROUP BY 1 ORDER BY 2 DESC`));
    }
    const busiest = held.map((h) => live.findIndex((s) => h.owner.startsWith(`${hostname()}/${s.child.pid}/`))).find((i) => i !== -1) ?? 1;
    const victim = live[busiest];
    const pid = victim.child.pid!;
    killAt = Date.now();
    victim.child.kill('SIGKILL');
    progressAtKill = TYPES.map((t) => nativeEvents(t, doubles.get(t)!));
    const unique = TYPES.map((t) => received(t, doubles.get(t)!).size);
    await new Promise((r) => (victim.child.exitCode !== null || victim.child.signalCode !== null ? r(null) : victim.child.once('exit', r)));
    recordedAtKill = await recordedPairs(sql);
    recordedShare = TYPES.map((t, k) => `${t} ${[...recordedAtKill.keys()].filter((x) => x.startsWith(`${t}\0`)).length} of ${unique[k]}`).join(', ');
    // What it held when it died (before the restart releases it).
    const like = `${hostname()}/${pid}/%`;
    const q = await sql.query<{ event_id: string; destination_type: string | null }>(`SELECT coalesce(e.event_id, e.id::text) AS event_id, NULL AS destination_type
      FROM dispatch_queue q JOIN events e ON e.seq = q.event_seq WHERE q.lease_owner LIKE $1
      UNION ALL SELECT coalesce(e.event_id, e.id::text), NULL FROM fanout_cursors c JOIN events e ON ${AFTER_CURSOR} WHERE c.lease_owner LIKE $1`, [like]);
    const d = await sql.query<{ event_id: string; destination_type: string }>(
      "SELECT event_id, destination_type FROM deliveries WHERE lease_owner LIKE $1 AND status = 'pending'", [like]);
    for (const r of q.rows) queuedAtKill.add(r.event_id);
    for (const r of d.rows) leasedAtKill.add(`${r.destination_type}\0${r.event_id}`);
    killed = { queued: q.rowCount ?? 0, leased: d.rowCount ?? 0 };
    const restarted = await startServer(env);
    all.push(restarted);
    live.splice(busiest, 1, restarted);
  };
  let killing: Promise<void> | undefined;
  const client = async () => {
    while (Date.now() - started < LOAD_SECONDS * 1000) {
      if (killing === undefined && Date.now() - started >= (LOAD_SECONDS * 1000) / 2) killing = kill();
      const i = n++;
      await send(i, `crash-${run}-${i}`);
    }
  };
  if (BACKLOG > 0) {
    // Half way through KILL_ON's.
    const d = doubles.get(KILL_ON)!;
    while (nativeEvents(KILL_ON, d) < BACKLOG / 2) await new Promise((r) => setTimeout(r, KILL_ON === 'webhook' ? 20 : 2));
    killing = kill(KILL_ON === 'webhook' ? undefined : d.requests.at(-1)!.remotePort);
  } else await Promise.all(Array.from({ length: CONNECTIONS }, client));
  await killing;

  // Every accepted event at every destination, then nothing pending or queued.
  const deadline = Date.now() + 180_000;
  const missingAt = (t: string) => {
    const got = new Set([...received(t, doubles.get(t)!).values()].map((r) => r.eventId));
    return [...acked].filter((id) => !got.has(id)).length;
  };
  const missing = () => TYPES.reduce((x, t) => x + missingAt(t), 0);
  let shown = 0;
  for (let m = missing(); m > 0 && Date.now() < deadline; m = missing()) {
    if (Date.now() - shown > 10_000) {
      shown = Date.now();
      const per = TYPES.map((t) => `${t} ${missingAt(t)}`).join(', ');
      process.stderr.write(`run ${run}: ${acked.size} accepted, ${m} (event, destination) not delivered yet (${per})\n`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  while (Date.now() < deadline) {
    const { rows: [w] } = await sql.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM dispatch_queue)::int + (SELECT count(*) FROM deliveries WHERE status = 'pending')::int
        + (SELECT count(*) FROM fanout_cursors c JOIN events e ON ${AFTER_CURSOR})::int AS n`);
    if (w.n === 0) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  await new Promise((r) => setTimeout(r, 1_000));

  const lost = missing();
  const resent: Resent[] = [];
  const why = { queuedNoRow: 0, rowLeased: 0, other: 0 };
  let delivered = 0;
  const recordedAtEnd = await recordedPairs(sql);
  for (const t of TYPES) {
    const got = received(t, doubles.get(t)!);
    delivered += got.size;
    const again = [...got.values()].filter((r) => r.at.length > 1);
    const x: Resent = { type: t, n: again.length, beforeKillMs: again.map((r) => killAt - r.at[0]), recorded: 0, unrecorded: 0, afterKill: 0, twiceRecorded: 0, firstRequests: [] };
    const requests = new Set<number>();
    for (const r of again) {
      const key = `${t}\0${r.eventId}`;
      if ((recordedAtEnd.get(key) ?? 0) > 1) x.twiceRecorded++;
      if (r.at[0] >= killAt) x.afterKill++;
      else if (recordedAtKill.has(key)) x.recorded++;
      else {
        x.unrecorded++;
        // One entry per request: its receipt time and size identify it well enough here.
        if (!requests.has(r.at[0])) requests.add(r.at[0]), x.firstRequests.push(r.size[0]);
      }
    }
    resent.push(x);
    for (const r of again) {
      if (leasedAtKill.has(`${t}\0${r.eventId}`)) why.rowLeased++;
      else if (queuedAtKill.has(r.eventId)) why.queuedNoRow++;
      else why.other++;
    }
  }
  await sql.end();
  for (const s of all) if (s.child.signalCode === null) await stop(s.child);
  for (const d of doubles.values()) await d.close();
  process.off('exit', orphans);
  await db.drop();
  rmSync(dataDir, { recursive: true, force: true });
  return { accepted: acked.size, delivered, lost, resent, total: resent.reduce((x, r) => x + r.n, 0), killed, why, progressAtKill, senderFound, recordedShare };
}

async function main(): Promise<void> {
  // Interrupted: the 'exit' handlers kill the servers started.
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => process.exit(130));
  console.log(BACKLOG > 0
    ? `a backlog of ${BACKLOG} accepted events drained by 3 PostgreSQL instances, one killed with SIGKILL once ${KILL_ON} received half of them and restarted; 4 destinations\n`
    : `${LOAD_SECONDS} s of endpoint-1 load, ${CONNECTIONS} connections over 3 PostgreSQL instances, one killed with SIGKILL at ${LOAD_SECONDS / 2} s and restarted; 4 destinations\n`);
  console.log('| run | accepted | delivered (native, unique) | lost | sent again: ga4 / meta-capi / tiktok / webhook | total | first copy before the kill, ms (median / max) | killed held: queued events / leased deliveries | sent again because: queued, no row / row leased / other |');
  console.log('|---|---:|---:|---:|---|---:|---|---|---|');
  const runs: CrashRun[] = [];
  for (let i = 1; i <= RUNS; i++) {
    const r = await crashRun(i);
    runs.push(r);
    const before = r.resent.flatMap((x) => x.beforeKillMs);
    console.log(`| ${i} | ${r.accepted} | ${r.delivered} | ${r.lost} | ${r.resent.map((x) => x.n).join(' / ')} | ${r.total} | ${percentile(before, 0.5)} / ${before.length === 0 ? 0 : Math.max(...before)} | ${r.killed.queued} / ${r.killed.leased} | ${r.why.queuedNoRow} / ${r.why.rowLeased} / ${r.why.other} |`);
  }
  console.log('\nsent again, by what the database held when the killed process was gone:');
  runs.forEach((r, i) => {
    const sender = KILL_ON === 'webhook' ? '' : r.senderFound ? `; killed: the sender of ${KILL_ON}'s last request` : `; killed: the busiest (the sender of ${KILL_ON}'s last request not found)`;
    console.log(`- run ${i + 1}: native events received when the kill was sent: ${TYPES.map((t, k) => `${t} ${r.progressAtKill[k]}`).join(', ')}${sender}; recorded as delivered then, of the events received: ${r.recordedShare}`);
    for (const x of r.resent.filter((y) => y.n > 0)) {
      console.log(`  - ${x.type}: ${x.n}: first copy recorded then ${x.recorded}; not recorded then ${x.unrecorded} (first copies in requests of ${x.firstRequests.join(', ')} events); every copy after the kill ${x.afterKill}; recorded twice at the end ${x.twiceRecorded}`);
    }
  });
  const out = arg('--json');
  if (out) writeFileSync(out, `${JSON.stringify({ load_s: LOAD_SECONDS, connections: CONNECTIONS, runs }, null, 2)}\n`);
  if (runs.some((r) => r.lost > 0)) process.exitCode = 1;
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
