// Row shapes PostgreSQL returns that more than one module reads, and their conversion.
import type { EventRecord } from '../types.ts';

export interface PgEventRow {
  seq: number; id: string; script_id: string; name: string | null; event_id: string | null; status: EventRecord['status'];
  source: string; request_id: string; received_at: number; errors: string; warnings: string; payload: string;
}

export const toPgEvent = (r: PgEventRow): EventRecord => ({
  id: r.id, scriptId: r.script_id, name: r.name, eventId: r.event_id, status: r.status, source: r.source,
  requestId: r.request_id, receivedAt: r.received_at, errors: JSON.parse(r.errors), warnings: JSON.parse(r.warnings),
  payload: JSON.parse(r.payload),
});
