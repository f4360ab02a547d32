// `npm run bench:mapping`: the fan-out's CPU stage alone, in one process, no store and no
// network: 200 checkout_completed events planned for four destinations (ga4, meta-capi,
// tiktok, webhook) with the shipped plugins and rules, then each destination's requests built
// from the items as the send lanes build them, and their bodies measured as the HTTP sender
// measures them. Prints the best of five timed rounds in µs per
// event and the bytes allocated per event (V8's sampling heap profiler, collected objects
// included: an unbiased estimate from ~30,000 samples of 10 rounds, which the machine's load
// does not move). Identifiers are hashed inline here (the server hashes them in the pool).
// Steadier than the end-to-end runs on a shared machine: use it to compare mapping changes.
// `BENCH_MAPPING_SITES=40` also prints where the bytes go (add `--no-turbo-inlining` to
// the node flags to see inlined functions apart from their callers).
import inspector from 'node:inspector';
import { join } from 'node:path';
import { SPEC_EVENT_NAMES } from '../../src/accounts/types.ts';
import { buildRequestsFor } from '../../src/delivery/build-requests-for.ts';
import type { ClaimedDelivery } from '../../src/delivery/types.ts';
import { loadPlugins } from '../../src/destinations/load-plugins.ts';
import { planEvents, type PlanSubject } from '../../src/pipeline/plan-event.ts';
import { loadRules } from '../../src/rules/load-rules.ts';
import type { NormalizedEvent } from '../../src/schema/types.ts';
import { validateEvent } from '../../src/schema/validate-event.ts';
import type { DestinationRecord } from '../../src/store/types.ts';
import { checkout, ROOT, SETTINGS } from '../delivery/delivery-fixture.ts';

const TYPES = ['ga4', 'meta-capi', 'tiktok', 'webhook'];
const EVENTS = 200;
const ROUNDS = Number(process.env.BENCH_MAPPING_ROUNDS ?? 60);

const plugins = await loadPlugins(join(ROOT, 'plugins'));
const loaded = loadRules(join(ROOT, 'rules'), { pluginsDir: join(ROOT, 'plugins') });
if (!loaded.ok) throw new Error('the shipped rules do not load');
const rules = loaded.ruleSet;
const destinations = TYPES.map((type) => ({
  id: `dst_${type}`, scriptId: 'BENCH001', type, name: type, enabled: true, settings: SETTINGS[type]('http://127.0.0.1:9'),
}) as unknown as DestinationRecord);
const account = { scriptId: 'BENCH001', country: 'RO', host: null };
const ctx = { approvedEvents: new Set(SPEC_EVENT_NAMES), defaultTaxRate: 19, host: null };
const events = Array.from({ length: EVENTS }, (_, i) =>
  validateEvent(checkout(`E-${i}`, { user: { id: `u-${i % 50}`, email: `u${i % 50}@example.com` } }), ctx).event as NormalizedEvent);

/** One fan-out batch: plan every event, then build each destination's requests in batches of its plugin's size. */
async function round(): Promise<number> {
  const subjects: PlanSubject[] = events.map((event, i) => ({ account, destinations, event, eventId: `E-${i}`, receivedAt: 1_700_000_000_000 }));
  const plans = await planEvents({ plugins, rules, pool: null }, subjects, { now: Date.now(), build: false, warnings: false });
  let requests = 0;
  TYPES.forEach((type, k) => {
    const claimed: ClaimedDelivery[] = [];
    plans.forEach((p, i) => {
      const plan = p[k];
      if (plan.status !== 'ready') return;
      for (const item of plan.items) {
        claimed.push({ id: i, eventSeq: i, scriptId: account.scriptId, destinationId: destinations[k].id, destinationType: type, eventId: `E-${i}`, attempts: 0, receivedAt: 0, item });
      }
    });
    const plugin = plugins.get(type)!.plugin;
    const size = plugin.batch.maxEvents;
    for (let j = 0; j < claimed.length; j += size) {
      const { units } = buildRequestsFor(plugin, type, destinations[k].settings, claimed.slice(j, j + size), Date.now());
      // As the HTTP sender does (undici measures a string body for its content-length): a body
      // still made of pieces is copied into one string here, so that copy is counted too.
      for (const u of units) Buffer.byteLength(u.request.body);
      requests += units.length;
    }
  });
  return requests;
}

const perRound = await round();
if (perRound === 0) throw new Error('no request was built: the rules map nothing for this event');
for (let i = 0; i < 30; i++) await round(); // warm-up: the JIT settles
let best = Infinity;
for (let rep = 0; rep < 5; rep++) {
  const t = performance.now();
  for (let i = 0; i < ROUNDS / 5; i++) await round();
  best = Math.min(best, (performance.now() - t) / (ROUNDS / 5));
}

const session = new inspector.Session();
session.connect();
const post = <T>(method: string, params: object = {}) =>
  new Promise<T>((resolve, reject) => session.post(method, params, (err, r) => (err ? reject(err) : resolve(r as T))));
interface CallFrame { functionName: string; url: string; lineNumber: number }
interface SampleNode { selfSize: number; callFrame: CallFrame; children: SampleNode[] }
await post('HeapProfiler.enable');
await post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
const SAMPLED = 10;
for (let i = 0; i < SAMPLED; i++) await round();
const { profile } = await post<{ profile: { head: SampleNode } }>('HeapProfiler.stopSampling');
session.disconnect();
const total = (n: SampleNode): number => n.selfSize + n.children.reduce((s, c) => s + total(c), 0);

/** `BENCH_MAPPING_SITES=N`: the N sites that allocate most, each with the nearest project frame that called it. */
function printSites(head: SampleNode, n: number): void {
  const where = (f: CallFrame) => `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(src|plugins|test)\//, '$1/')}:${f.lineNumber + 1}`;
  const ours = (f: CallFrame) => /\/(src|plugins)\//.test(f.url);
  const bytes = new Map<string, number>();
  const walk = (node: SampleNode, caller: CallFrame | null) => {
    const site = ours(node.callFrame) || caller === null ? where(node.callFrame) : `${where(node.callFrame)} ← ${where(caller)}`;
    if (node.selfSize > 0) bytes.set(site, (bytes.get(site) ?? 0) + node.selfSize);
    for (const c of node.children) walk(c, ours(node.callFrame) ? node.callFrame : caller);
  };
  walk(head, null);
  // Inclusive: a project function's bytes with everything it called (counted once under recursion).
  const inclusive = new Map<string, number>();
  const walkIn = (node: SampleNode, open: Set<string>): number => {
    const name = ours(node.callFrame) ? where(node.callFrame) : null;
    const fresh = name !== null && !open.has(name);
    if (fresh) open.add(name);
    let sum = node.selfSize;
    for (const c of node.children) sum += walkIn(c, open);
    if (fresh) {
      open.delete(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + sum);
    }
    return sum;
  };
  walkIn(head, new Set());
  const kb = (b: number) => `${(b / 1024 / (SAMPLED * EVENTS)).toFixed(2).padStart(7)} KB`;
  console.log('Allocated by the site itself:');
  for (const [site, b] of [...bytes].sort((x, y) => y[1] - x[1]).slice(0, n)) console.log(`${kb(b)}  ${site}`);
  console.log('Allocated by a project function and what it called:');
  for (const [site, b] of [...inclusive].sort((x, y) => y[1] - x[1]).slice(0, n)) console.log(`${kb(b)}  ${site}`);
}
if (process.env.BENCH_MAPPING_SITES) printSites(profile.head, Number(process.env.BENCH_MAPPING_SITES));

const result = {
  events_per_round: EVENTS, destinations: TYPES.length, requests_per_round: perRound,
  us_per_event: Number(((best * 1000) / EVENTS).toFixed(1)),
  kb_allocated_per_event: Number((total(profile.head) / 1024 / (SAMPLED * EVENTS)).toFixed(1)),
};
console.log(`Mapping + building, ${EVENTS} events × ${TYPES.length} destinations (${perRound} requests a round): ` +
  `${result.us_per_event} µs and ${result.kb_allocated_per_event} KB allocated per event.`);
console.log(JSON.stringify(result));
