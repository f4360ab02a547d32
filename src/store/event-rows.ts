// An events-table row as both stores return it, and the domain record it becomes: one
// conversion for every reader (event listings, fan-out claims, trace).
import type { EventRecord } from '../domain/records.ts';
import type { EventSummary, ListedEvent } from './types.ts';
import { payloadJson } from './payload-codec.ts';

export interface EventRow {
  id: string; script_id: string; name: string | null; event_id: string | null; status: EventRecord['status'];
  source: string; request_id: string; received_at: number; errors: string; warnings: string;
  /** The payload's JSON text, or '' when payload_packed holds it (payload-codec.ts). */
  payload: string; payload_packed: Uint8Array | null;
}

/** With its position in the table (`SELECT *`). */
export interface SeqEventRow extends EventRow {
  seq: number;
}

export const toEventRecord = (r: EventRow): EventRecord => ({
  id: r.id, scriptId: r.script_id, name: r.name, eventId: r.event_id, status: r.status, source: r.source,
  requestId: r.request_id, receivedAt: r.received_at, errors: JSON.parse(r.errors), warnings: JSON.parse(r.warnings),
  payload: JSON.parse(payloadJson(r)),
});

/** A listing's row: the record and the position a next page starts before. */
export const toListedEvent = (r: SeqEventRow): ListedEvent => Object.assign(toEventRecord(r), { seq: r.seq });

/** A summary row: the columns an event listing shows, the issues counted by the database. */
export interface EventSummaryRow {
  seq: number; id: string; script_id: string; name: string | null; event_id: string | null; status: EventRecord['status'];
  source: string; received_at: number; error_count: number; warning_count: number; first_error_code: string | null;
}

/**
 * The summary columns; `length` and `firstCode` are the dialect's length of a TEXT column's
 * JSON array and its first element's `code`.
 */
export function eventSummaryColumns(d: { length: (column: string) => string; firstCode: (column: string) => string }): string {
  return `seq, id, script_id, name, event_id, status, source, received_at, ${d.length('errors')} AS error_count, ` +
    `${d.length('warnings')} AS warning_count, ${d.firstCode('errors')} AS first_error_code`;
}

export const toEventSummary = (r: EventSummaryRow): EventSummary => ({
  seq: r.seq, id: r.id, scriptId: r.script_id, name: r.name, eventId: r.event_id, status: r.status, source: r.source,
  receivedAt: r.received_at, errorCount: r.error_count, warningCount: r.warning_count, firstErrorCode: r.first_error_code,
});
