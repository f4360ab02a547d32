// An event row's id: a version 7 UUID (RFC 9562, the `uuid` package), its first 48 bits the time
// it was received in milliseconds, the rest random. Ids of events received one after another
// sort in that order, so the index on events.id (PostgreSQL events_id, SQLite's migration 23)
// grows at its right edge, as events_pkey does, instead of at a random leaf per insert: fewer
// page splits and pages dirtied per event, and less WAL (a full-page image per leaf first
// touched after a checkpoint, on PostgreSQL).
import { v7 } from 'uuid';

/** A version 7 UUID for time `ms` (epoch milliseconds). */
export function eventUuid(ms: number): string {
  return v7({ msecs: Math.max(0, Math.floor(ms)) });
}
