// The delivery store's vocabulary (statuses, stored items, sent requests, health) and what its
// operator side answers and takes (listings, attempts, replay filters, statistics, the queue
// snapshot, purges), apart from the claim-and-record contract in delivery-contract.ts, which
// re-exports all of it.
import type { OutgoingItem } from '../domain/records.ts';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'dead' | 'skipped';
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed', 'dead', 'skipped'];

/** What a delivery row keeps of an item; the event comes from its row, the message id is recomputed. */
export type StoredItem = Omit<OutgoingItem, 'event' | 'messageId'>;

/** How an attempt ended. */
export type AttemptOutcome = 'success' | 'retryable' | 'permanent';

/** The request an attempt sent, secrets masked (src/delivery/sent-request.ts). */
export interface SentRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /**
   * The body text, up to 16 KiB; null where it was not kept: an attempt that succeeded keeps
   * its size and digest only (the body is the mapping of the stored event, rebuilt and checked
   * against the digest when a trace shows it).
   */
  body: string | null;
  bodyBytes: number;
  /** Of the whole body as sent (before any masking). */
  bodySha256: string;
  bodyTruncated: boolean;
}

/**
 * A delivery delivered by its first attempt with no row of its own (handed off, delivered): its
 * attempt lists it as the `index`-th pair of its `delivered` column, and its id is derived from
 * both, DERIVED_ID_BASE + attemptId * PAIRS_PER_ATTEMPT + index. Row ids stay below the base, so
 * the two never collide, and every derived id is a safe integer (attempt ids below 2^40).
 */
export const DERIVED_ID_BASE = 2 ** 52;
/** Delivered pairs an attempt keeps at most; any further ones get rows. */
export const PAIRS_PER_ATTEMPT = 4096;
/**
 * The widest span of event seqs an attempt's delivered pairs cover (last_seq - first_seq): the
 * attempts that delivered event seq S are those with last_seq in [S, S + DELIVERED_SEQ_SPAN] and
 * first_seq <= S, a short range of their index. Pairs further below the attempt's last one get rows.
 */
export const DELIVERED_SEQ_SPAN = 4096;

/** The id of the `index`-th delivered pair of attempt `attemptId`. */
export const derivedDeliveryId = (attemptId: number, index: number): number => DERIVED_ID_BASE + attemptId * PAIRS_PER_ATTEMPT + index;

/** The attempt and pair a derived id names; null for a row id (or anything that is not a derived id). */
export function decodeDeliveryId(id: number): { attemptId: number; index: number } | null {
  if (!Number.isSafeInteger(id) || id < DERIVED_ID_BASE) return null;
  const rest = id - DERIVED_ID_BASE;
  const attemptId = Math.floor(rest / PAIRS_PER_ATTEMPT);
  return attemptId < 1 ? null : { attemptId, index: rest % PAIRS_PER_ATTEMPT };
}

export interface DestinationHealth {
  destinationId: string;
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
  failingSince: number | null;
  pausedAt: number | null;
  pauseReason: string | null;
}


export interface DeliveryFilter {
  /** A row id or a derived id (decodeDeliveryId). */
  id?: number;
  /** Only deliveries with a smaller id (the next page of a listing, newest first: derived ids above row ids). */
  beforeId?: number;
  /** The deliveries of one stored event, by its tracklane id (events.id). */
  eventRowId?: string;
  scriptId?: string;
  status?: DeliveryStatus;
  eventId?: string;
  destinationId?: string;
  limit?: number;
}

export interface DeliveryView {
  id: number;
  scriptId: string;
  eventId: string | null;
  destinationId: string;
  destinationType: string;
  status: DeliveryStatus;
  skipReason: string | null;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: number | null;
  receivedAt: number;
  createdAt: number;
  updatedAt: number;
  deliveredAt: number | null;
  /** The destination is paused. */
  paused: boolean;
  /** The mapped native event it sends (the event itself is joined from its row); null when nothing can be sent. */
  item: StoredItem | null;
  /** Which of its destination's native events for the event it is (null: stored before parts were kept). */
  part: number | null;
}

export interface AttemptView {
  id: number;
  attemptedAt: number;
  statusCode: number | null;
  latencyMs: number;
  responseBody: string | null;
  errorClass: string | null;
  outcome: AttemptOutcome;
  message: string | null;
  /** Deliveries the request carried. */
  events: number;
  /** What was sent; null for attempts recorded before it was kept. */
  request: SentRequest | null;
}

export interface ReplayFilter {
  /** One delivery by its id (a row id or a derived one). */
  deliveryId?: number;
  scriptId?: string;
  destinationId?: string;
  eventId?: string;
  /** Which statuses to re-queue; `delivered` only when the operator forces it. */
  statuses: readonly ('failed' | 'dead' | 'delivered')[];
  /** Only deliveries created at or after this time. */
  since?: number;
  /** Re-queue at most this many, oldest first (a bulk replay's cap per call). */
  limit?: number;
}

export interface DestinationStats {
  destinationId: string;
  scriptId: string;
  type: string;
  name: string;
  enabled: boolean;
  removed: boolean;
  counts: Record<DeliveryStatus, number>;
  /** Acknowledgement time of the oldest pending delivery. */
  oldestPendingAt: number | null;
  /** The earliest next_attempt_at of its pending deliveries (a leased one: its lease end); null: none pending. Past: work waits. */
  nextDueAt: number | null;
  health: DestinationHealth | null;
}

export interface QueueSnapshot {
  /** Accepted events not yet fanned out. */
  dispatchBacklog: number;
  byType: { destinationType: string; pending: number; oldestPendingAt: number | null }[];
  /** Each destination with pending deliveries (removed ones left out). */
  byDestination: {
    destinationId: string;
    destinationType: string;
    pending: number;
    oldestPendingAt: number | null;
    nextDueAt: number | null;
    enabled: boolean;
    paused: boolean;
  }[];
  pausedDestinations: number;
}

export interface PurgeResult {
  events: number;
  deliveries: number;
  attempts: number;
}

