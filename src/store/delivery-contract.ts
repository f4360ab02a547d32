// The delivery store contract, next to the store that fulfils it: fan-out claims, delivery
// claims with leases fenced by a claim id, attempt records, destination health, and the
// operator queries. SQLite (sqlite/delivery-store.ts) and PostgreSQL
// (postgres/delivery-store.ts) implement it; every method is async and takes plain data.
// Delivery (src/delivery/) uses it through src/delivery/types.ts.
// Its fan-out side (claims, results) is in fan-out-contract.ts, its send lanes' side (claimed
// deliveries, attempt records) in attempt-contract.ts, its views in delivery-views.ts: this
// module re-exports them all, so importers name this one.
import type { DestinationRecord } from '../domain/records.ts';
import type { DestinationHealth, DeliveryFilter, DeliveryView, AttemptView, ReplayFilter, DestinationStats, QueueSnapshot, PurgeResult } from './delivery-views.ts';
import type { DispatchEvent, FanOutCommit, FanOutResult } from './fan-out-contract.ts';
import type { AttemptRecord, ClaimedDelivery, RecordResult, UnstoredRow } from './attempt-contract.ts';

export type { DeliveryStatus, StoredItem, AttemptOutcome, SentRequest, DestinationHealth, DeliveryFilter, DeliveryView, AttemptView, ReplayFilter, DestinationStats, QueueSnapshot, PurgeResult } from './delivery-views.ts';
export { DELIVERY_STATUSES, DERIVED_ID_BASE, derivedDeliveryId, decodeDeliveryId } from './delivery-views.ts';
export { partKey, type DispatchEvent, type NewDelivery, type FanOutResult, type FanOutCommit } from './fan-out-contract.ts';
export {
  MAX_RESPONSE_BYTES, pauseOf, type ClaimedDelivery, type StoredDelivery, type HandedOffDelivery, type UnstoredRow,
  type DeliveryUpdate, type HttpAttempt, type AttemptRecord, type RecordResult,
} from './attempt-contract.ts';

/** A destination that may have deliveries sent: not removed. */
export interface ActiveDestination extends DestinationRecord {
  pausedAt: number | null;
  /** The destination's updatedAt when it was paused: a later change resumes it. */
  pausedDestinationUpdatedAt: number | null;
}

/**
 * The reason (skip_reason) of a delivery failed because mapping its event kept killing or
 * stalling the delivery thread (src/delivery/poison.ts). Such a row keeps no item: replaying
 * it queues its event for the fan-out again, for that destination.
 */
export const MAPPING_FAILED = 'mapping_failed';

/** `last_error` of a pending delivery canceled because its destination was removed. */
export const REMOVED_MESSAGE = 'canceled: the destination was removed';
/** `last_error` of a pending delivery expired because its destination stayed disabled or paused. */
export const EXPIRED_MESSAGE = 'expired: the destination stayed disabled or paused for longer than the retention period';

export interface DeliveryStore {
  /**
   * Leases up to `limit` accepted events awaiting fan-out (oldest first) to `claimId` until
   * `now + leaseMs`, each with the rows it already has (`stored`). Awaiting fan-out: accepted
   * after the store's fan-out cursor (SQLite, docs/fan-out-cursor.md: one lease over the
   * cursor, taken per process owner, `ownerOf(claimId)`), or in the dispatch queue (held
   * events, events replay queued again, those a claim that died was mapping; PostgreSQL: every
   * one). Events still leased to `claimId` itself are taken again: a process fans
   * out one batch at a time, so its own earlier lease belongs to a batch whose completion
   * failed (a store error), and waiting for that lease to lapse would only delay it.
   * Each claim counts against the event until its fan-out completes (`interrupted`, reset when
   * it stays unsettled; a retake by the same claim does not count; from the cursor, the count
   * is made when another claim takes over the events a gone holder was mapping). An event some
   * fan-out left unfinished is claimed alone: the claim stops before it, or takes it and nothing else.
   */
  claimEvents(claimId: string, now: number, leaseMs: number, limit: number): Promise<DispatchEvent[]>;
  /**
   * For each event still leased to `claimId`, in one transaction with its rows: inserts its
   * deliveries but the handed-off ones (a row it already has is left) and settles it (the
   * fan-out cursor may pass it; a queued one leaves the dispatch queue), unless it handed
   * deliveries off (it stays leased until `finishEvents`) or is held (it waits in the queue).
   * An event whose lease was lost is left to its new holder.
   */
  completeFanOut(claimId: string, now: number, results: readonly FanOutResult[]): Promise<FanOutCommit>;
  /**
   * Leases up to `limit` due pending deliveries of a destination: due retries (attempted
   * before) first, then first attempts, each oldest due first, and answers them in that order.
   * `retriesOnly`: due retries and nothing else.
   */
  claimDeliveries(destinationId: string, claimId: string, now: number, leaseUntil: number, limit: number, opts?: { retriesOnly?: boolean }): Promise<ClaimedDelivery[]>;
  /** When the destination's next pending delivery is due (a leased one: when its lease ends); null if none. */
  nextDue(destinationId: string): Promise<number | null>;
  /**
   * Records attempts and applies each update only where `claimId` still holds the delivery (an update
   * with `row` inserts it, unless its event has it, or, delivered, its attempt lists it); one transaction.
   */
  recordAttempts(records: readonly AttemptRecord[]): Promise<RecordResult[]>;
  /**
   * Stores handed-off deliveries as pending rows (those already stored are left): due at `now`
   * (handed back unsent), or leased to `lease.claimId` (still in its lane, for a while: then
   * they show in every view, and their attempt's record updates them under that claim).
   * Returns each row's new id, null where it was stored already.
   */
  storeHandoffs(rows: readonly UnstoredRow[], now: number, lease?: { claimId: string; leaseUntil: number }): Promise<(number | null)[]>;
  /** Settles the events among `seqs` still leased to `claimId` (the cursor may pass them; queued ones leave the queue): their handed-off deliveries all have rows. */
  finishEvents(claimId: string, seqs: readonly number[]): Promise<number>;
  /** Hands back the deliveries among `ids` that `claimId` still holds, due at `now`. */
  release(claimId: string, now: number, ids: readonly number[]): Promise<number>;
  /**
   * Hands back every lease (the fan-out cursor's, queued events and deliveries) of a process
   * owner id; the events its fan-out was mapping then count as interrupted.
   */
  releaseOwner(owner: string, now: number): Promise<number>;
  /** Claim ids currently holding a lease, expired or not. */
  leaseHolders(): Promise<string[]>;
  /** Clears leases that have expired, so they show as unclaimed; they are due either way. */
  recoverExpiredLeases(now: number): Promise<number>;
  /** Every destination not removed, with its pause state. */
  activeDestinations(): Promise<ActiveDestination[]>;
  health(destinationId: string): Promise<DestinationHealth | null>;
  /** Clears the pause and the failure clock, and makes its pending deliveries due at `now`. */
  resume(destinationId: string, now: number): Promise<{ wasPaused: boolean; due: number }>;
  /** Rows and deliveries delivered without one (derived ids), merged, newest (highest id) first; attempts: of either. */
  list(filter: DeliveryFilter): Promise<DeliveryView[]>;
  attempts(deliveryId: number): Promise<AttemptView[]>;
  /**
   * Re-queues matching deliveries (pending, attempts 0, due at `now`); returns how many. A
   * `mapping_failed` one is removed and its event queued for fan-out again for its destination.
   * One delivered without a row gets a pending row without item (mapped again: `remap`).
   */
  replay(filter: ReplayFilter, now: number): Promise<number>;
  /** How many deliveries `replay(filter)` would re-queue (without its limit). */
  countReplayable(filter: ReplayFilter): Promise<number>;
  stats(scriptId?: string): Promise<DestinationStats[]>;
  /** Events awaiting fan-out: queued ones, and accepted ones after the fan-out cursor (SQLite). */
  dispatchBacklog(): Promise<number>;
  queueSnapshot(): Promise<QueueSnapshot>;
  /** Deletes events, finished deliveries and attempts older than `before`; pending work, its events and events awaiting fan-out stay. */
  purge(before: number): Promise<PurgeResult>;
  /** Deletes dedup keys first seen before `before`. */
  purgeDedupKeys(before: number): Promise<number>;
  /**
   * Makes pending deliveries that wait for a retry due at `now` (all, one account's, or one
   * destination's); leased ones are left alone. Returns how many.
   */
  retryNow(filter: { scriptId?: string; destinationId?: string }, now: number): Promise<number>;
  /**
   * Cancels pending deliveries nothing will send: those of removed destinations (skip reason
   * `destination_removed`) and those created before `before` for a destination that is
   * disabled or paused (skip reason `expired`). Retention then purges them and their events.
   */
  expireStranded(now: number, before: number): Promise<{ removed: number; expired: number }>;
}
