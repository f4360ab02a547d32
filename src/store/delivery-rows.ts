// Turning delivery rows into the contract's shapes, the same for both stores: claimed
// deliveries with their events joined back, deliveries delivered without a row (read from the
// attempt that delivered them), destination health, per-destination stats, and the response cap
// of an attempt record.
import type { NormalizedEvent } from '../schema/types.ts';
import { DELIVERED_SEQ_SPAN, PAIRS_PER_ATTEMPT, derivedDeliveryId } from './delivery-views.ts';
import type {
  AttemptView, ClaimedDelivery, DeliveryStatus, DeliveryView, DestinationHealth, DestinationStats, QueueSnapshot, SentRequest, StoredItem,
} from './delivery-contract.ts';
import { payloadJson } from './payload-codec.ts';

export interface ClaimRow {
  id: number; event_seq: number; script_id: string; destination_id: string; destination_type: string;
  event_id: string | null; attempts: number; received_at: number; part: number | null; item: string | null; payload: string | null;
  payload_packed: Uint8Array | null;
  /** The event row's own id (the dedup key of an event without event.id). */
  event_uuid: string | null;
}

/** A delivery row with `paused` joined in (SQLite answers 0/1, PostgreSQL a boolean). */
export interface ViewRow {
  id: number; script_id: string; event_id: string | null; destination_id: string; destination_type: string;
  status: DeliveryStatus; skip_reason: string | null; attempts: number; last_status_code: number | null;
  last_error: string | null; next_attempt_at: number | null; received_at: number; created_at: number;
  updated_at: number; delivered_at: number | null; paused: boolean | number; item: string | null; part: number | null;
}

/**
 * A delivery delivered with no row: one pair of its attempt's `delivered` column (`idx` its
 * position), with the attempt, its destination's type and pause, and its event joined (event_id
 * and received_at null when the event row is gone).
 */
export interface DerivedRow {
  attempt_id: number; idx: number; event_seq: number; part: number; script_id: string; destination_id: string;
  destination_type: string | null; event_id: string | null; received_at: number | null; attempted_at: number;
  status_code: number | null; paused: boolean | number;
}

/** What its row would have said: delivered by its one attempt, without its item. */
export const toDerivedView = (r: DerivedRow): DeliveryView => ({
  id: derivedDeliveryId(Number(r.attempt_id), Number(r.idx)), scriptId: r.script_id, eventId: r.event_id,
  destinationId: r.destination_id, destinationType: r.destination_type ?? '', status: 'delivered', skipReason: null, attempts: 1,
  lastStatusCode: r.status_code, lastError: null, nextAttemptAt: null, receivedAt: Number(r.received_at ?? r.attempted_at),
  createdAt: Number(r.attempted_at), updatedAt: Number(r.attempted_at), deliveredAt: Number(r.attempted_at),
  paused: r.paused === true || r.paused === 1, item: null, part: Number(r.part),
});

/** A handed-off delivery an attempt delivered and found without a row: [event_seq, part]. */
export type DeliveredPair = [number, number];

/**
 * Which of the pairs an attempt delivered (in its updates' order) it keeps in its `delivered`
 * column: at most PAIRS_PER_ATTEMPT, within DELIVERED_SEQ_SPAN below the highest seq. `keep[i]`
 * false: pair i gets a row as before. `delivered` null when it keeps none.
 */
export function keepDelivered(pairs: readonly DeliveredPair[]): { keep: boolean[]; delivered: DeliveredPair[] | null; firstSeq: number; lastSeq: number } {
  let lastSeq = -Infinity;
  for (const [seq] of pairs) if (seq > lastSeq) lastSeq = seq;
  const delivered: DeliveredPair[] = [];
  let firstSeq = lastSeq;
  const keep = pairs.map(([seq, part]) => {
    if (seq < lastSeq - DELIVERED_SEQ_SPAN || delivered.length >= PAIRS_PER_ATTEMPT) return false;
    delivered.push([seq, part]);
    if (seq < firstSeq) firstSeq = seq;
    return true;
  });
  return { keep, delivered: delivered.length === 0 ? null : delivered, firstSeq, lastSeq };
}

export interface AttemptRow {
  id: number; attempted_at: number; status_code: number | null; latency_ms: number; response_body: string | null;
  error_class: string | null; outcome: AttemptView['outcome']; message: string | null; events: number; request: string | null;
}

export const toDeliveryView = (r: ViewRow): DeliveryView => ({
  id: r.id, scriptId: r.script_id, eventId: r.event_id, destinationId: r.destination_id,
  destinationType: r.destination_type, status: r.status, skipReason: r.skip_reason, attempts: r.attempts,
  lastStatusCode: r.last_status_code, lastError: r.last_error, nextAttemptAt: r.next_attempt_at,
  receivedAt: r.received_at, createdAt: r.created_at, updatedAt: r.updated_at, deliveredAt: r.delivered_at,
  paused: r.paused === true || r.paused === 1,
  item: r.item === null ? null : (JSON.parse(r.item) as StoredItem),
  part: r.part ?? null,
});

export const toAttemptView = (r: AttemptRow): AttemptView => ({
  id: r.id, attemptedAt: r.attempted_at, statusCode: r.status_code, latencyMs: r.latency_ms,
  responseBody: r.response_body, errorClass: r.error_class, outcome: r.outcome, message: r.message, events: r.events,
  request: r.request === null || r.request === undefined ? null : decodeRequest(r.request),
});

/**
 * What an attempt sent, as its `request` column keeps it: a JSON array [method, url, headers,
 * bodyBytes, SHA-256 in base64, body, truncated], the body and its flag left off when there is
 * none (an attempt that succeeded): ~90 bytes fewer per attempt than the object with its keys
 * and the digest in hex. Rows written before keep the object, read as it is.
 */
export function encodeRequest(r: SentRequest | undefined): string | null {
  if (r === undefined) return null;
  const head = [r.method, r.url, r.headers, r.bodyBytes, Buffer.from(r.bodySha256, 'hex').toString('base64')];
  return JSON.stringify(r.body === null && !r.bodyTruncated ? head : [...head, r.body, r.bodyTruncated]);
}

export function decodeRequest(text: string): SentRequest {
  const v = JSON.parse(text) as SentRequest | [string, string, Record<string, string>, number, string, (string | null)?, boolean?];
  if (!Array.isArray(v)) return v;
  const [method, url, headers, bodyBytes, sha, body = null, bodyTruncated = false] = v;
  return { method, url, headers, body, bodyBytes, bodySha256: Buffer.from(sha, 'base64').toString('hex'), bodyTruncated };
}

export interface HealthRow {
  destination_id: string; last_success_at: number | null; last_failure_at: number | null; failing_since: number | null;
  paused_at: number | null; pause_reason: string | null;
}

/** A destination row joined with its (possibly absent: destination_id null) health row. */
export type DestinationHealthRow = HealthRow & {
  id: string; script_id: string; type: string; name: string; enabled: boolean | number; removed_at: number | null;
};

export const toHealth = (r: HealthRow): DestinationHealth => ({
  destinationId: r.destination_id, lastSuccessAt: r.last_success_at, lastFailureAt: r.last_failure_at,
  failingSince: r.failing_since, pausedAt: r.paused_at, pauseReason: r.pause_reason,
});

/** Rebuilds OutgoingItems; the event payload is parsed once per event. */
export function toClaimed(rows: readonly ClaimRow[]): ClaimedDelivery[] {
  const events = new Map<number, NormalizedEvent>();
  return rows.map((r) => {
    let item: ClaimedDelivery['item'] = null;
    let event: NormalizedEvent | undefined;
    if (r.payload !== null) {
      event = events.get(r.event_seq);
      if (event === undefined) {
        event = JSON.parse(payloadJson({ payload: r.payload, payload_packed: r.payload_packed })) as NormalizedEvent;
        events.set(r.event_seq, event);
      }
      if (r.item !== null) item = { ...(JSON.parse(r.item) as StoredItem), event };
    }
    const claimed: ClaimedDelivery = {
      id: r.id, eventSeq: r.event_seq, scriptId: r.script_id, destinationId: r.destination_id,
      destinationType: r.destination_type, eventId: r.event_id, attempts: r.attempts, receivedAt: r.received_at, item,
    };
    // A row without its item (delivered, then replayed) is mapped again from its event.
    if (item === null && event !== undefined && r.part !== null) claimed.remap = { event, part: r.part, eventKey: r.event_id ?? r.event_uuid ?? '' };
    return claimed;
  });
}

/** Cuts `s` to at most `max` UTF-8 bytes. */
export function truncateBytes(s: string | null, max: number): string | null {
  if (s === null || s.length * 3 <= max) return s;
  const buf = Buffer.from(s, 'utf8');
  return buf.length <= max ? s : buf.subarray(0, max).toString('utf8');
}

const emptyCounts = (): Record<DeliveryStatus, number> => ({ pending: 0, delivered: 0, failed: 0, dead: 0, skipped: 0 });

/**
 * Destinations with their counts by status; removed ones only while they have deliveries on
 * record. A (destination, status) may come more than once (rows, and deliveries delivered
 * without a row: status 'delivered'): their counts add up.
 */
export function assembleStats(
  dests: readonly DestinationHealthRow[],
  counts: readonly { destination_id: string; status: DeliveryStatus; n: number; oldest: number | null; next_due: number | null }[],
): DestinationStats[] {
  const byId = new Map<string, DestinationStats>();
  for (const d of dests) {
    byId.set(d.id, {
      destinationId: d.id, scriptId: d.script_id, type: d.type, name: d.name, enabled: d.enabled === true || d.enabled === 1,
      removed: d.removed_at !== null, counts: emptyCounts(), oldestPendingAt: null, nextDueAt: null,
      health: d.destination_id === null ? null : toHealth(d),
    });
  }
  for (const c of counts) {
    const s = byId.get(c.destination_id);
    if (!s) continue;
    s.counts[c.status] += Number(c.n);
    if (c.status === 'pending') {
      s.oldestPendingAt = c.oldest;
      s.nextDueAt = c.next_due === null ? null : Number(c.next_due);
    }
  }
  return [...byId.values()].filter((s) => !s.removed || Object.values(s.counts).some((n) => n > 0));
}

/** A destination's pending deliveries summed, with its enabled flag and pause (queueSnapshot). */
export interface PendingByDestinationRow {
  destination_id: string; destination_type: string; pending: number; oldest: number | null; next_due: number | null;
  enabled: boolean | number; paused_at: number | null;
}

export function toPendingByDestination(r: PendingByDestinationRow): QueueSnapshot['byDestination'][number] {
  return {
    destinationId: r.destination_id, destinationType: r.destination_type, pending: Number(r.pending),
    oldestPendingAt: r.oldest === null ? null : Number(r.oldest), nextDueAt: r.next_due === null ? null : Number(r.next_due),
    enabled: r.enabled === true || r.enabled === 1, paused: r.paused_at !== null,
  };
}
