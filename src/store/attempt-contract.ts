// The send lanes' side of the delivery store contract (delivery-contract.ts, which re-exports it):
// the deliveries a lane holds (ClaimedDelivery: a stored row, or one handed off with none) and
// the attempt records that update them (AttemptRecord, DeliveryUpdate, RecordResult).
import type { OutgoingItem } from '../domain/records.ts';
import type { NormalizedEvent } from '../schema/types.ts';
import type { AttemptOutcome, SentRequest, StoredItem } from './delivery-views.ts';

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

/**
 * The pause a failed record may set, as both stores write it: `reason`, once the destination's
 * failing_since is at or before `bound` (410 Gone: now; else failing with no success for
 * pauseAfterMs). Null when the record pauses nothing.
 */
export function pauseOf(rec: AttemptRecord): { reason: string; bound: number } | null {
  if (rec.pauseNow !== undefined) return { reason: rec.pauseNow, bound: rec.at };
  if (!(rec.pauseAfterMs > 0)) return null;
  const hours = Math.round((rec.pauseAfterMs / 3_600_000) * 100) / 100;
  return { reason: `failing with no success for ${hours} h; last error: ${rec.message}`.slice(0, 500), bound: rec.at - rec.pauseAfterMs };
}

export interface RecordResult {
  /** Ids whose update was applied; the others were no longer held by the claim (fenced). */
  applied: number[];
  /** The destination is paused (now or already). */
  paused: boolean;
}

/** Response bytes an attempt record keeps (as Svix). */
export const MAX_RESPONSE_BYTES = 20_000;
