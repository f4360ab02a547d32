// Fan-out: accepted events → one delivery per (event, destination, native event). Claims a
// batch of queued events with a lease, hashes every identifier the batch needs in one pool
// call, maps each (event, destination), and hands each running lane what it has room for
// without storing it (the attempt record writes its row once, in its final state). The rest
// (skipped, failed, pending without room) is stored in one transaction with the event leaving
// the queue; an event with handoffs stays queued, leased, until they have rows
// (event-settler.ts), and is fanned out again for the rows it lacks if its lease ends first.
// A destination whose rules are held (broken since start, src/rules/rule-holds.ts) is not
// mapped: the event stays queued for it alone, leased to the hold's claim, and its other
// destinations' deliveries go out now. An event whose mapping was cut short twice (it killed
// or stalled the thread: poison.ts) is not mapped again: its deliveries fail (`mapping_failed`).
import type { Account } from '../accounts/types.ts';
import type { PluginRegistry } from '../destinations/load-plugins.ts';
import { planEvents, type DestinationPlan, type PlanSubject } from '../pipeline/plan-event.ts';
import type { RuleSet } from '../rules/rule-set.ts';
import type { NormalizedEvent } from '../schema/types.ts';
import type { DestinationRecord, Store } from '../store/types.ts';
import type { HashPool } from '../workers/pool.ts';
import type { OutgoingItem } from '../domain/records.ts';
import { isPoison, mappingFailedRows } from './poison.ts';
import { partKey, type DispatchEvent, type HandedOffDelivery, type FanOutCommit, type FanOutResult, type NewDelivery, type UnstoredRow } from './types.ts';

/** A send lane's offer to take new deliveries straight from the fan-out, under a claim of its own (no rows: not stored). */
export interface HandoffOffer {
  claimId: string;
  leaseUntil: number;
  /** How many deliveries it takes at most. */
  room: number;
}

/** Deliveries handed to one lane under `claimId`, not stored: their rows are written when their attempts are recorded. */
export interface Handoff {
  claimId: string;
  leaseUntil: number;
  deliveries: HandedOffDelivery[];
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
  /** A new id for a handed-off delivery without a row: negative, never repeated in the process. */
  unstoredId: () => number;
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
export async function fanOutOnce(deps: FanOutDeps): Promise<FanOutCommit & { claimed: number; handoffs: Map<string, Handoff>; mappingFailed: PoisonEvent[] }> {
  const { store } = deps;
  const claimedAt = deps.clock();
  // next (the events table's read side): src/store/sqlite/dispatch-queue.ts claimEvents (PostgreSQL: postgres/dispatch-queue.ts).
  const claimed = await store.deliveries.claimEvents(deps.claimId, claimedAt, deps.leaseMs, deps.batchSize);
  if (claimed.length === 0) return { claimed: 0, events: 0, pendingByDestination: new Map(), handedOff: [], handoffs: new Map(), mappingFailed: [] };

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
  const plans = await planEvents({ plugins: deps.plugins, rules, pool: deps.pool }, subjects.filter((_, i) => !isPoison(claimed[i])),
    { now: deps.clock(), build: false, warnings: false, sliceMs: SLICE_MS });
  // Which way a delivery enters its lane: handed off in memory while the lane offers room (it
  // takesHandoffs: nothing stored is due for it), else stored pending and claimed by the lane
  // later (lane-claims.ts). Each lane is asked once a pass; its room is counted down here, per
  // destination (the offer a lane returned is left as it was).
  const offers = new Map<string, HandoffOffer | null>();
  const roomLeft = new Map<string, number>();
  const takesOneMore = (destinationId: string): boolean => {
    if (!offers.has(destinationId)) {
      const o = deps.offer?.(destinationId) ?? null;
      offers.set(destinationId, o);
      roomLeft.set(destinationId, o?.room ?? 0);
    }
    const left = roomLeft.get(destinationId)!;
    if (left <= 0) return false;
    roomLeft.set(destinationId, left - 1);
    return true;
  };
  const hold = deps.hold ?? { claimId: `${deps.claimId}.held`, ms: HOLD_MS };
  const holdUntil = deps.clock() + hold.ms;
  // One list per event, built once: each row with the item (event included) a lane is handed.
  let planned = 0;
  const rows = claimed.map((e, i) => isPoison(e)
    ? mappingFailedRows(subjects[i].destinations, e.stored, e.interrupted!).map((row) => ({ row }))
    : rowsOf(plans[planned++], e.stored, takesOneMore));
  const poison = claimed.flatMap((event, i): PoisonEvent[] => (isPoison(event) ? [{ event, rows: rows[i].map((r) => r.row) }] : []));
  const results: FanOutResult[] = claimed.map(({ seq, event: rec }, i) => ({
    seq, scriptId: rec.scriptId, eventId: rec.eventId, receivedAt: rec.receivedAt,
    deliveries: rows[i].map((r) => r.row),
    ...(holds[i].length === 0 ? {} : { held: { destinationIds: holds[i], claimId: hold.claimId, leaseUntil: holdUntil } }),
  }));
  const commit = await store.deliveries.completeFanOut(deps.claimId, deps.clock(), results);
  // A handoff's lease ends with its event's, so the event is not fanned out again while a lane holds it.
  const eventLeaseEnd = claimedAt + deps.leaseMs;
  return { claimed: claimed.length, ...commit, handoffs: handoffsOf(commit.handedOff, claimed, rows, offers, eventLeaseEnd, deps.unstoredId), mappingFailed: poison };
}

/** An event failed instead of mapped (poison.ts), with its failed rows. */
export interface PoisonEvent {
  event: DispatchEvent;
  rows: NewDelivery[];
}

/** One delivery row of an event, with what its lane is handed when it is a handoff. */
interface PlannedRow {
  row: NewDelivery;
  /** The item with its event: set for a handoff. */
  item?: OutgoingItem;
}

/** The handed-off deliveries of the events committed with handoffs, per destination: each lane's claimed deliveries, from memory. */
function handoffsOf(
  handedOff: readonly number[], claimed: readonly DispatchEvent[], rows: readonly PlannedRow[][],
  offers: ReadonlyMap<string, HandoffOffer | null>, eventLeaseEnd: number, unstoredId: () => number,
): Map<string, Handoff> {
  const handoffs = new Map<string, Handoff>();
  if (handedOff.length === 0) return handoffs;
  const committed = new Set(handedOff);
  claimed.forEach(({ seq, event: rec }, i) => {
    if (!committed.has(seq)) return;
    for (const { row, item } of rows[i]) {
      if (item === undefined) continue;
      let h = handoffs.get(row.destinationId);
      if (!h) {
        const offer = offers.get(row.destinationId)!;
        handoffs.set(row.destinationId, (h = { claimId: offer.claimId, leaseUntil: Math.min(offer.leaseUntil, eventLeaseEnd), deliveries: [] }));
      }
      const unstored: UnstoredRow = {
        eventSeq: seq, scriptId: rec.scriptId, destinationId: row.destinationId, destinationType: row.destinationType,
        eventId: rec.eventId, receivedAt: rec.receivedAt, part: row.part, item: row.item!,
      };
      h.deliveries.push({
        id: unstoredId(), eventSeq: seq, scriptId: rec.scriptId, destinationId: row.destinationId, destinationType: row.destinationType,
        eventId: rec.eventId, attempts: 0, receivedAt: rec.receivedAt, item, unstored,
      });
    }
  });
  return handoffs;
}

/**
 * The rows of one event's plans, but those an earlier fan-out stored: each ready item as a
 * pending row (handed off while its lane has room), or one skipped/failed row saying why.
 */
function rowsOf(plans: readonly DestinationPlan[], stored: ReadonlySet<string> | undefined, takesOneMore: (destinationId: string) => boolean): PlannedRow[] {
  const out: PlannedRow[] = [];
  for (const p of plans) {
    const base = { destinationId: p.destination.id, destinationType: p.destination.type };
    if (p.status === 'ready') {
      p.items.forEach(({ event: _event, ...rest }, part) => {
        if (stored?.has(partKey(base.destinationId, part))) return;
        if (!takesOneMore(base.destinationId)) return void out.push({ row: { ...base, part, status: 'pending', item: rest } });
        out.push({ row: { ...base, part, status: 'pending', item: rest, handoff: true }, item: p.items[part] });
      });
      continue;
    }
    if (stored?.has(partKey(base.destinationId, 0))) continue;
    // A mapping that failed (a plugin or rule bug) is recorded as failed so the operator sees
    // it, never retried; a request that cannot be built fails the same way in the send lane.
    // A skip's warnings are its explanation ("see warnings"), so they are kept with it.
    const message = p.warnings.length === 0 ? p.message : `${p.message}. Warnings: ${p.warnings.join('; ')}`;
    out.push({ row: { ...base, part: 0, status: p.status, item: null, reason: p.reason, message } });
  }
  return out;
}
