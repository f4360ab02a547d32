// Fan-out: accepted events → one delivery per (event, destination, native event). Claims a
// batch of queued events with a lease, hashes every identifier the batch needs in one pool
// call, maps each (event, destination), and commits deliveries + "dispatched" in one transaction.
// A destination whose rules are held (broken since start, src/rules/rule-holds.ts) is not
// mapped: the event stays queued for it alone, leased to the hold's claim, and its other
// destinations' deliveries go out now.
import type { Account } from '../accounts/types.ts';
import type { PluginRegistry } from '../destinations/load-plugins.ts';
import { planEvents, type DestinationPlan, type PlanSubject } from '../pipeline/plan-event.ts';
import type { RuleSet } from '../rules/rule-set.ts';
import type { NormalizedEvent } from '../schema/types.ts';
import type { DestinationRecord, Store } from '../store/types.ts';
import type { HashPool } from '../workers/pool.ts';
import type { ClaimedDelivery, FanOutCommit, FanOutResult, NewDelivery } from './types.ts';

/** A send lane's offer to take new deliveries straight from the fan-out, already leased to its claim. */
export interface HandoffOffer {
  claimId: string;
  leaseUntil: number;
  /** How many deliveries it takes at most. */
  room: number;
}

/** Deliveries handed to one lane: stored leased to `claimId`, so no claim query is needed. */
export interface Handoff {
  claimId: string;
  leaseUntil: number;
  deliveries: ClaimedDelivery[];
}

export interface FanOutDeps {
  store: Store;
  plugins: PluginRegistry;
  rules: { current(): RuleSet };
  /** Null: identifiers are hashed inline by the mapping. */
  pool: HashPool | null;
  clock: () => number;
  /** The fan-out claim id (fenced like a delivery claim). */
  claimId: string;
  leaseMs: number;
  batchSize: number;
  /** The running send lanes' offers (none: every delivery is claimed by its lane from the store). */
  offer?: (destinationId: string) => HandoffOffer | null;
  /** Events held for some destinations are leased to `claimId` for `ms` (default: `${claimId}.held`, HOLD_MS). */
  hold?: { claimId: string; ms: number };
}

/** How long an event held for broken rules waits before it is looked at again (a rule change releases it at once). */
export const HOLD_MS = 60_000;

type AccountInfo = Pick<Account, 'scriptId' | 'country' | 'host'>;

/** Longest stretch of mapping between two yields to the event loop. */
const SLICE_MS = 5;

interface Context {
  account: AccountInfo;
  destinations: DestinationRecord[];
}

/** One pass: claims up to batchSize events and fans them out. Resolves with what was committed. */
export async function fanOutOnce(deps: FanOutDeps): Promise<FanOutCommit & { claimed: number; handoffs: Map<string, Handoff> }> {
  const { store } = deps;
  const claimed = await store.deliveries.claimEvents(deps.claimId, deps.clock(), deps.leaseMs, deps.batchSize);
  if (claimed.length === 0) return { claimed: 0, events: 0, pendingByDestination: new Map(), leased: [], handoffs: new Map() };

  const contexts = new Map<string, Context | null>();
  for (const { event } of claimed) {
    if (contexts.has(event.scriptId)) continue;
    const account = await store.accounts.get(event.scriptId);
    contexts.set(event.scriptId, account ? { account, destinations: await store.destinations.list(event.scriptId) } : null);
  }

  const rules = deps.rules.current();
  /** Per event: the destination ids its rules hold now. */
  const holds: string[][] = [];
  // An account that is gone plans for no destination: its events are marked dispatched with none.
  const subjects: PlanSubject[] = claimed.map(({ event: rec, heldFor }, i) => {
    const ctx = contexts.get(rec.scriptId);
    // Held before: only the destinations it still owes (a removed one is owed nothing).
    const owed = (ctx?.destinations ?? []).filter((d) => heldFor === undefined || heldFor.includes(d.id));
    const held = rules.held.length === 0 ? [] : owed.filter((d) => rules.heldFor(rec.scriptId, d.type) !== null).map((d) => d.id);
    holds[i] = held;
    return {
      account: ctx?.account ?? { scriptId: rec.scriptId, country: null, host: null },
      destinations: held.length === 0 ? owed : owed.filter((d) => !held.includes(d.id)),
      event: rec.payload as NormalizedEvent,
      eventId: rec.eventId ?? rec.id,
      receivedAt: rec.receivedAt,
    };
  });
  // Mapping is CPU work: yield every few ms so the thread's other work is not held up.
  const plans = await planEvents({ plugins: deps.plugins, rules, pool: deps.pool }, subjects,
    { now: deps.clock(), build: false, warnings: false, sliceMs: SLICE_MS });
  const offers = new Map<string, HandoffOffer | null>();
  const offerFor = (destinationId: string): HandoffOffer | null => {
    if (!offers.has(destinationId)) offers.set(destinationId, deps.offer?.(destinationId) ?? null);
    const o = offers.get(destinationId)!;
    return o !== null && o.room > 0 ? o : null;
  };
  const hold = deps.hold ?? { claimId: `${deps.claimId}.held`, ms: HOLD_MS };
  const holdUntil = deps.clock() + hold.ms;
  const results: FanOutResult[] = claimed.map(({ seq, event: rec }, i) => ({
    seq, scriptId: rec.scriptId, eventId: rec.eventId, receivedAt: rec.receivedAt,
    deliveries: plans[i].flatMap((p) => toDeliveries(p, offerFor)),
    ...(holds[i].length === 0 ? {} : { held: { destinationIds: holds[i], claimId: hold.claimId, leaseUntil: holdUntil } }),
  }));
  const commit = await store.deliveries.completeFanOut(deps.claimId, deps.clock(), results);
  return { claimed: claimed.length, ...commit, handoffs: handoffsOf(commit.leased, claimed, plans, results) };
}

/** The committed leased rows as each lane's claimed deliveries, with their items and events from memory. */
function handoffsOf(
  leased: FanOutCommit['leased'], claimed: readonly { seq: number }[], plans: readonly DestinationPlan[][], results: readonly FanOutResult[],
): Map<string, Handoff> {
  const handoffs = new Map<string, Handoff>();
  if (leased.length === 0) return handoffs;
  const at = new Map(claimed.map(({ seq }, i) => [seq, i]));
  const items = new Map<number, ClaimedDelivery['item'][]>();
  for (const { seq, index, id } of leased) {
    const i = at.get(seq)!;
    const r = results[i];
    const d = r.deliveries[index];
    let list = items.get(i);
    if (list === undefined) items.set(i, (list = itemsOf(plans[i])));
    const item = list[index];
    let h = handoffs.get(d.destinationId);
    if (!h) handoffs.set(d.destinationId, (h = { claimId: d.lease!.claimId, leaseUntil: d.lease!.leaseUntil, deliveries: [] }));
    h.deliveries.push({
      id, eventSeq: seq, scriptId: r.scriptId, destinationId: d.destinationId, destinationType: d.destinationType,
      eventId: r.eventId, attempts: 0, receivedAt: r.receivedAt, item,
    });
  }
  return handoffs;
}

/** A plan list's items in the order toDeliveries lists rows (null where a row carries none). */
function itemsOf(plans: readonly DestinationPlan[]): (ClaimedDelivery['item'])[] {
  return plans.flatMap((p) => (p.status === 'ready' ? p.items : [null]));
}

/** The rows of one plan: pending items, or one skipped/failed row saying why. */
function toDeliveries(p: DestinationPlan, offerFor: (destinationId: string) => HandoffOffer | null): NewDelivery[] {
  const base = { destinationId: p.destination.id, destinationType: p.destination.type };
  if (p.status === 'ready') {
    return p.items.map(({ event: _event, ...item }) => {
      const offer = offerFor(p.destination.id);
      if (offer === null) return { ...base, status: 'pending' as const, item };
      offer.room--;
      return { ...base, status: 'pending' as const, item, lease: { claimId: offer.claimId, leaseUntil: offer.leaseUntil } };
    });
  }
  // A mapping that failed (a plugin or rule bug) is recorded as failed so the operator sees
  // it, never retried; a request that cannot be built fails the same way in the send lane.
  // A skip's warnings are its explanation ("see warnings"), so they are kept with it.
  const message = p.warnings.length === 0 ? p.message : `${p.message}. Warnings: ${p.warnings.join('; ')}`;
  return [{ ...base, status: p.status, item: null, reason: p.reason, message }];
}
