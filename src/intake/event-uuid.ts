// An event row's id: a version 7 UUID (RFC 9562), its first 48 bits the time it was received in
// milliseconds, then 74 random bits. Ids of events received one after another sort in that
// order, so the index on events.id (PostgreSQL events_id, SQLite's migration 23) grows at its
// right edge, as events_pkey does, instead of at a random leaf per insert: fewer page splits
// and pages dirtied per event, and less WAL (a full-page image per leaf first touched after
// a checkpoint, on PostgreSQL). Random bits come from a pooled buffer, refilled 4 KiB at a time.
import { randomFillSync } from 'node:crypto';

const pool = Buffer.alloc(4096);
let used = pool.length;

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** A version 7 UUID for time `ms` (epoch milliseconds). */
export function eventUuid(ms: number): string {
  if (used + 10 > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const r = pool.subarray(used, (used += 10));
  const t = Math.max(0, Math.floor(ms));
  const hi = Math.floor(t / 2 ** 16);
  const h = [hi >>> 24 & 0xff, hi >>> 16 & 0xff, hi >>> 8 & 0xff, hi & 0xff, t >>> 8 & 0xff, t & 0xff,
    0x70 | (r[0] & 0x0f), r[1], 0x80 | (r[2] & 0x3f), r[3], r[4], r[5], r[6], r[7], r[8], r[9]].map((b) => HEX[b]);
  return `${h[0]}${h[1]}${h[2]}${h[3]}-${h[4]}${h[5]}-${h[6]}${h[7]}-${h[8]}${h[9]}-${h.slice(10).join('')}`;
}
