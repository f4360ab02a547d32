// The delivery store contract, next to the store that fulfils it: fan-out claims, delivery
// claims with leases fenced by a claim id, attempt records, destination health, and the
// operator queries. SQLite (sqlite/delivery-store.ts) and PostgreSQL
// (postgres/delivery-store.ts) implement it; every method is async and takes plain data.
// Delivery (src/delivery/) uses it through src/delivery/types.ts.
import type { DestinationRecord, EventRecord, OutgoingItem } from '../domain/records.ts';
import type { NormalizedEvent } from '../schema/types.ts';
import type { DeliveryStatus, StoredItem, AttemptOutcome, SentRequest, DestinationHealth, DeliveryFilter, DeliveryView, AttemptView, ReplayFilter, DestinationStats, QueueSnapshot, PurgeResult } from './delivery-views.ts';

export type { DeliveryStatus, StoredItem, AttemptOutcome, SentRequest, DestinationHealth, DeliveryFilter, DeliveryView, AttemptView, ReplayFilter, DestinationStats, QueueSnapshot, PurgeResult } from './delivery-views.ts';
export { DELIVERY_STATUSES, DERIVED_ID_BASE, derivedDeliveryId, decodeDeliveryId } from './delivery-views.ts';

/** An accepted event claimed for fan-out. */
export interface DispatchEvent {
  /** events.seq, the event row id. */
  seq: number;
  event: EventRecord;
  /** An event fanned out in part while rules were held: the destination ids it still owes (absent: every destination). */
  heldFor?: readonly string[];
  /**
   * What an earlier fan-out of this event settled (it stopped before the event was settled: a crash,
   * a lost lease), as `destinationId#part`: its rows and pairs attempts delivered with none. Not mapped again.
   */
  stored?: ReadonlySet<string>;
  /**
   * Earlier fan-outs of this event that started mapping it and never finished (the thread or
   * process died, ran out of memory, or was ended by the watchdog meanwhile); absent: none.
   * Such an event is claimed alone, so a second interruption is its own (src/delivery/poison.ts).
   */
  interrupted?: number;
}

/** The key of a delivery among its event's: `destinationId#part` (a row's unique key with its event_seq). */
export const partKey = (destinationId: string, part: number): string => `${destinationId}#${part}`;

/** One row fan-out creates for an (event, destination, native event). */
export interface NewDelivery {
  destinationId: string;
  destinationType: string;
  /** `pending` to send; `skipped` (nothing to send, with the reason); `failed` (the request could not be built). */
  status: 'pending' | 'skipped' | 'failed';
  /** Null when nothing can be sent. */
  item: StoredItem | null;
  /** Skip reason code (SkipReason, `plugin_missing`). */
  reason?: string;
  /** What an operator reads in `last_error`. */
  message?: string;
  /** Which of its destination's native events for the event this is (0 for a skipped or failed row). */
  part: number;
  /**
   * A pending delivery handed straight to a send lane: not stored now. Its row is written once,
   * by the attempt record, in the state the attempt leaves it (delivered: without its item),
   * and the event stays unsettled, leased to the claim (SQLite: open, the fan-out cursor
   * waiting before it; PostgreSQL: in the dispatch queue), until every handed-off delivery has
   * its row (`finishEvents`); should the process stop first, the event is fanned out again
   * for the rows it lacks.
   */
  handoff?: boolean;
}

export interface FanOutResult {
  seq: number;
  scriptId: string;
  /** The customer's event.id. */
  eventId: string | null;
  receivedAt: number;
  deliveries: NewDelivery[];
  /**
   * Destinations whose rules are held (rule-holds.ts): the event waits in the dispatch queue
   * for them, leased to `claimId` until `leaseUntil`, instead of being settled; `deliveries`
   * are its other destinations' rows.
   */
  held?: { destinationIds: readonly string[]; claimId: string; leaseUntil: number };
}

export interface FanOutCommit {
  /** Events whose fan-out was committed (their lease was still ours). */
  events: number;
  /** New pending deliveries stored per destination id, to wake the send lanes (handoffs not counted). */
  pendingByDestination: Map<string, number>;
  /** Events committed with deliveries handed off: they stay unsettled (leased to the claim) until those are recorded. */
  handedOff: number[];
}

/**
 * A delivery a send lane holds, in one of two states (`unstored` tells them apart):
 * - StoredDelivery: a pending row claimed from the store under a lease (claimDeliveries), or a
 *   handed-off one stored since (handed back, or stored while in its lane: src/delivery/
 *   lane-in-flight.ts). Its record updates the row by `id`, fenced by the claim.
 * - HandedOffDelivery: handed to a lane by the fan-out with no row (`unstored` is what its row
 *   is written from); its record inserts the row in the state the attempt left it.
 */
export type ClaimedDelivery = StoredDelivery | HandedOffDelivery;

interface DeliveryFields {
  eventSeq: number;
  scriptId: string;
  destinationId: string;
  destinationType: string;
  /** The customer's event.id. */
  eventId: string | null;
  /** Attempts made before this claim. */
  attempts: number;
  /** When the event was acknowledged. */
  receivedAt: number;
  /**
   * The item with its event joined back; null when the event row is gone, or when the row
   * keeps no item (a delivered one replayed): then `remap` holds the event, to be mapped again.
   * Handed off by the fan-out, it keeps its message id.
   */
  item: (Omit<OutgoingItem, 'messageId'> & { messageId?: string }) | null;
}

/** A pending delivery with a row, claimed for sending. */
export interface StoredDelivery extends DeliveryFields {
  /** The row id. */
  id: number;
  /** A row without its item (delivered rows keep none), replayed: its event and part, to map it again. */
  remap?: { event: NormalizedEvent; part: number; eventKey: string };
  unstored?: undefined;
}

/** A delivery the fan-out handed to a lane without storing it. */
export interface HandedOffDelivery extends DeliveryFields {
  /** A key of the process's own for its update and metrics: negative, never a row id. */
  id: number;
  /** What its row is written from (by its attempt record, or when it is stored first). */
  unstored: UnstoredRow;
  remap?: undefined;
}

/** A handed-off delivery that has no row yet: what its row is written from. */
export interface UnstoredRow {
  eventSeq: number;
  scriptId: string;
  destinationId: string;
  destinationType: string;
  eventId: string | null;
  receivedAt: number;
  part: number;
  item: StoredItem;
}

/** The state a delivery moves to after an attempt (or a decision without one). */
export interface DeliveryUpdate {
  /** The row id; a handed-off delivery without a row: its negative key (HandedOffDelivery). */
  id: number;
  status: 'pending' | 'delivered' | 'failed' | 'dead';
  /** Attempts made, this one included. */
  attempts: number;
  nextAttemptAt: number | null;
  /** Its own `last_error` when the reply judged it apart from the request (one event of a batch); else the record's message. */
  message?: string;
  /**
   * A handed-off delivery: its row is inserted in this state (its item kept unless delivered),
   * or updated where it is stored already leased to the record's claim (storeHandoffs with a
   * lease); a row another claim holds is left (the event was fanned out again). Delivered by its
   * first attempt (attempts 1) with no row: no row, its attempt lists it (`delivered`, a derived
   * id). `id` counts as applied when the row was written or the attempt lists it.
   */
  row?: UnstoredRow;
}

/** One HTTP request as it went out and came back. */
export interface HttpAttempt {
  /** What was sent; absent where the sender kept nothing. */
  request?: SentRequest;
  statusCode: number | null;
  latencyMs: number;
  /** Truncated to 20 000 bytes by the store. */
  responseBody: string | null;
  errorClass: string | null;
  outcome: AttemptOutcome;
}

export interface AttemptRecord {
  /** The claim the deliveries were taken with: an update is applied only while the claim still holds them. */
  claimId: string;
  destinationId: string;
  at: number;
  /** Null when no request went out (e.g. the request could not be built). */
  http: HttpAttempt | null;
  message: string;
  updates: DeliveryUpdate[];
  /** Pause the destination once it has been failing this long with no success; 0 never. */
  pauseAfterMs: number;
  /** Pause the destination now, with this reason (a receiver answered 410 Gone). */
  pauseNow?: string;
}

export interface RecordResult {
  /** Ids whose update was applied; the others were no longer held by the claim (fenced). */
  applied: number[];
  /** The destination is paused (now or already). */
  paused: boolean;
}

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

/** Response bytes an attempt record keeps (as Svix). */
export const MAX_RESPONSE_BYTES = 20_000;
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
