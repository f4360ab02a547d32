// Fan-out: accepted events → one delivery per (event, destination, native event). Claims a
// batch of queued events with a lease, hashes every identifier the batch needs in one pool
// call, maps each (event, destination), and commits deliveries + "dispatched" in one transaction.
import type { Account } from '../accounts/types.ts';
import { attributionSpecsOf, type PluginRegistry } from '../destinations/load-plugins.ts';
import type { HashedIdentifiers } from '../pipeline/identifiers/index.ts';
import { mapEventForDestination } from '../pipeline/map-event.ts';
import type { RuleSet } from '../rules/rule-set.ts';
import type { NormalizedEvent } from '../schema/types.ts';
import type { DestinationRecord, Store } from '../store/types.ts';
import type { HashPool } from '../workers/pool.ts';
import type { HashItem } from '../workers/hash-worker.ts';
import type { DispatchEvent, FanOutCommit, FanOutResult, NewDelivery } from './types.ts';

export interface FanOutDeps {
  store: Store;
  plugins: PluginRegistry;
  rules: { current(): RuleSet };
  /** Null: identifiers are hashed inline by mapEventForDestination. */
  pool: HashPool | null;
  clock: () => number;
  /** The fan-out claim id (fenced like a delivery claim). */
  claimId: string;
  leaseMs: number;
  batchSize: number;
}

type AccountInfo = Pick<Account, 'scriptId' | 'country' | 'host'>;

/** Longest stretch of mapping between two yields to the event loop. */
const SLICE_MS = 5;

interface Context {
  account: AccountInfo;
  destinations: DestinationRecord[];
}

/** One pass: claims up to batchSize events and fans them out. Resolves with what was committed. */
export async function fanOutOnce(deps: FanOutDeps): Promise<FanOutCommit & { claimed: number }> {
  const { store } = deps;
  const claimed = await store.deliveries.claimEvents(deps.claimId, deps.clock(), deps.leaseMs, deps.batchSize);
  if (claimed.length === 0) return { claimed: 0, events: 0, pendingByDestination: new Map() };

  const contexts = new Map<string, Context | null>();
  for (const { event } of claimed) {
    if (contexts.has(event.scriptId)) continue;
    const account = await store.accounts.get(event.scriptId);
    contexts.set(event.scriptId, account ? { account, destinations: await store.destinations.list(event.scriptId) } : null);
  }

  const hashed = await hashAll(deps, claimed, contexts);
  const now = deps.clock();
  const rules = deps.rules.current();
  const results: FanOutResult[] = [];
  let slice = performance.now();
  for (const [i, { seq, event: rec }] of claimed.entries()) {
    const ctx = contexts.get(rec.scriptId);
    const deliveries: NewDelivery[] = [];
    for (const d of ctx?.destinations ?? []) {
      deliveries.push(...deliveriesFor(deps, rules, ctx!.account, d, rec.payload as NormalizedEvent, rec.eventId ?? rec.id,
        rec.receivedAt, now, hashed.get(`${i}|${d.type}`)));
    }
    results.push({ seq, scriptId: rec.scriptId, eventId: rec.eventId, receivedAt: rec.receivedAt, deliveries });
    // Mapping is CPU work on the intake's thread: yield every few ms so acks are not held up.
    if (performance.now() - slice > SLICE_MS) {
      await new Promise((r) => setImmediate(r));
      slice = performance.now();
    }
  }
  return { claimed: claimed.length, ...(await store.deliveries.completeFanOut(deps.claimId, deps.clock(), results)) };
}

/** Identifiers of every (event, plugin type) in the batch, through the pool in one call. */
async function hashAll(deps: FanOutDeps, claimed: DispatchEvent[], contexts: Map<string, Context | null>): Promise<Map<string, HashedIdentifiers>> {
  const out = new Map<string, HashedIdentifiers>();
  if (deps.pool === null) return out;
  const keys: string[] = [];
  const seen = new Set<string>();
  const items: HashItem[] = [];
  claimed.forEach(({ event: rec }, i) => {
    const ctx = contexts.get(rec.scriptId);
    const user = (rec.payload as NormalizedEvent | null)?.user;
    if (!ctx || !user) return;
    for (const d of ctx.destinations) {
      const ids = deps.plugins.get(d.type)?.plugin.identifiers;
      const key = `${i}|${d.type}`;
      if (!ids || !d.enabled || seen.has(key)) continue;
      seen.add(key);
      keys.push(key);
      items.push({ user, spec: ids, defaultCountry: ctx.account.country ?? undefined });
    }
  });
  if (items.length === 0) return out;
  const hashed = await deps.pool.hashBatch(items);
  keys.forEach((k, j) => out.set(k, hashed[j]));
  return out;
}

/** The rows for one (event, destination): pending items, or one skipped/failed row saying why. */
function deliveriesFor(
  deps: FanOutDeps, rules: RuleSet, account: AccountInfo, d: DestinationRecord, event: NormalizedEvent,
  eventId: string, receivedAt: number, now: number, hashed: HashedIdentifiers | undefined,
): NewDelivery[] {
  const base = { destinationId: d.id, destinationType: d.type };
  const loaded = deps.plugins.get(d.type);
  if (!loaded) {
    return [{ ...base, status: 'skipped', item: null, reason: 'plugin_missing', message: `${d.type}: no plugin of this type is loaded` }];
  }
  try {
    const r = mapEventForDestination({
      plugin: loaded.plugin, destination: d, event, eventId, receivedAt, account,
      rules: rules.rulesFor(account.scriptId, d.type), now, hashed, build: false,
      attributionSpecs: attributionSpecsOf(deps.plugins),
    });
    if (r.status === 'skipped') return [{ ...base, status: 'skipped', item: null, reason: r.reason, message: r.message }];
    return r.items.map(({ event: _event, ...item }) => ({ ...base, status: 'pending', item }));
  } catch (err) {
    // Mapping itself failed (a plugin or rule bug): recorded as failed so the operator sees it;
    // never retried. A request that cannot be built fails the same way in the send lane,
    // which builds each request once, when it sends.
    return [{ ...base, status: 'failed', item: null, reason: 'build_failed', message: (err as Error).message.slice(0, 500) }];
  }
}
