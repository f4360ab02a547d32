// The domain records at the bottom of the layers: what an event and a destination are,
// as intake stores them and delivery reads them. Types only; every layer may import them.
import type { Issue } from '../schema/types.ts';

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
