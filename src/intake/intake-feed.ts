// The live feed of intake: every event row a request stored (accepted, rejected or
// duplicate), announced after its commit to whoever listens (the admin API's event stream);
// the event writer publishes (src/intake/intake-writer.ts). Costs nothing while nobody listens. In-process: each instance announces what it stored.
import type { EventRecord, EventStatus } from '../domain/records.ts';

/** What a listener receives for one stored event (no payload: fetch it by id). */
export interface IntakeMessage {
  id: string;
  script_id: string;
  name: string | null;
  event_id: string | null;
  status: EventStatus;
  source: string;
  received_at: number;
  /** When the commit returned, i.e. when the client was (about to be) answered. */
  acked_at: number;
  errors: EventRecord['errors'];
  warnings: EventRecord['warnings'];
}

export interface IntakeFeed {
  /** Announces committed rows with their stored statuses. */
  publish(rows: readonly EventRecord[], statuses: readonly EventStatus[]): void;
  /** Returns an unsubscribe function. A listener that throws is dropped. */
  subscribe(listener: (m: IntakeMessage) => void): () => void;
}

export function createIntakeFeed(now: () => number = Date.now): IntakeFeed {
  const listeners = new Set<(m: IntakeMessage) => void>();
  return {
    publish(rows, statuses) {
      if (listeners.size === 0) return;
      const at = now();
      rows.forEach((r, i) => {
        const m: IntakeMessage = {
          id: r.id, script_id: r.scriptId, name: r.name, event_id: r.eventId, status: statuses[i] ?? r.status,
          source: r.source, received_at: r.receivedAt, acked_at: at, errors: r.errors, warnings: r.warnings,
        };
        for (const l of listeners) {
          try {
            l(m);
          } catch {
            listeners.delete(l);
          }
        }
      });
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
