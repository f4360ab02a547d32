// The fan-out's side of the delivery store contract (delivery-contract.ts, which re-exports it):
// an accepted event as a claim hands it out (DispatchEvent), the rows its fan-out creates
// (NewDelivery, FanOutResult) and what completing it commits (FanOutCommit).
import type { EventRecord } from '../domain/records.ts';
import type { StoredItem } from './delivery-views.ts';

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
