// An events-table row as both stores return it, and the domain record it becomes: one
// conversion for every reader (event listings, fan-out claims, trace).
import type { EventRecord } from '../domain/records.ts';
import type { ListedEvent } from './types.ts';

export interface EventRow {
  id: string; script_id: string; name: string | null; event_id: string | null; status: EventRecord['status'];
  source: string; request_id: string; received_at: number; errors: string; warnings: string; payload: string;
}

/** With its position in the table (`SELECT *`). */
export interface SeqEventRow extends EventRow {
  seq: number;
}

export const toEventRecord = (r: EventRow): EventRecord => ({
  id: r.id, scriptId: r.script_id, name: r.name, eventId: r.event_id, status: r.status, source: r.source,
  requestId: r.request_id, receivedAt: r.received_at, errors: JSON.parse(r.errors), warnings: JSON.parse(r.warnings),
  payload: JSON.parse(r.payload),
});

/** A listing's row: the record and the position a next page starts before. */
export const toListedEvent = (r: SeqEventRow): ListedEvent => Object.assign(toEventRecord(r), { seq: r.seq });
