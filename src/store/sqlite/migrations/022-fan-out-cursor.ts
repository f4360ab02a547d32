// Migration 22: the fan-out reads accepted events from the events table after a cursor
// (fan-out-cursor.ts) instead of a dispatch_queue row per event, which intake no longer
// writes; dispatch_queue keeps the exceptions (held events, events replay queued again,
// events a claim that died was mapping). One row per partition (SQLite has one, part 0):
// cursor_seq (every accepted event up to it is settled or in dispatch_queue), mapped_to (the
// highest seq whose fan-out committed), claimed_to (the highest seq handed to a claim) and
// the lease of the process owner id that claims from it. Every event stored before this
// version has its queue row already, so the cursor starts behind all of them.
export default `
  CREATE TABLE fanout_cursors (
    part        INTEGER PRIMARY KEY,
    cursor_seq  INTEGER NOT NULL,
    mapped_to   INTEGER NOT NULL,
    claimed_to  INTEGER NOT NULL,
    lease_owner TEXT,
    lease_until INTEGER
  ) STRICT;
  INSERT INTO fanout_cursors (part, cursor_seq, mapped_to, claimed_to)
    SELECT 0, last, last, last FROM (SELECT coalesce(max(seq), 0) AS last FROM events);
`;
