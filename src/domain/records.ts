// The domain records at the bottom of the layers: what an event and a destination are,
// as intake stores them and delivery reads them. Types only; every layer may import them.
import type { Issue, NormalizedEvent } from '../schema/types.ts';
import type { AttributionIds } from '../attribution/index.ts';
import type { NativeEvent } from './rule-documents.ts';

export type EventStatus = 'accepted' | 'rejected' | 'duplicate';
/** Dedup keys are kept apart per environment: dev events never use up a production key. */
export type DedupEnvironment = 'prod' | 'dev';

/** One received event as stored. */
export interface EventRecord {
  /** Internal id (UUID v7-like, time ordered). */
  id: string;
  scriptId: string;
  /** The event name, or null when the body had none. */
  name: string | null;
  /** The customer's event.id, when given. */
  eventId: string | null;
  status: EventStatus;
  /** Which intake path took it: 'event' (1), 'standard' (3), 'custom:<name>'. */
  source: string;
  requestId: string;
  receivedAt: number;
  errors: Issue[];
  warnings: Issue[];
  /** Normalised event for accepted events; the body as received for rejected ones. */
  payload: unknown;
}

/** A destination connected to an account: a plugin type plus the operator's settings. */
export interface DestinationRecord {
  /** `dst_` + 16 hex characters. */
  id: string;
  scriptId: string;
  /** The plugin name, e.g. `ga4`. */
  type: string;
  name: string;
  enabled: boolean;
  /** The validated config, secrets included (mask before showing). */
  settings: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

/** One event on its way to one destination. */
export interface OutgoingItem {
  /** What the rule produced (fields built from the rule's output mapping). */
  native: NativeEvent;
  /** Stable dedup key: the customer's event.id, or tracklane's own event id. */
  eventId: string;
  /**
   * tracklane's own id for this native event to this destination (`msg_` + 32 hex): unique
   * per (account, event name, event.id, destination, rule), stable across retries, safe in
   * headers. Use it wherever the platform wants a message id that is not customer-controlled.
   */
  messageId: string;
  /** The validated event it came from. */
  event: NormalizedEvent;
  /** Hashed/normalised identifiers as native dot path → value (see identifiers). */
  identifiers: Record<string, string | string[]>;
  attribution: AttributionIds;
  /** ms since epoch when tracklane received the event. */
  receivedAt: number;
}
