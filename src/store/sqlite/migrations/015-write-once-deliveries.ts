// Migration 15: delivery bookkeeping written once on the happy path. A delivery handed
// straight to a send lane gets its row when its attempt is recorded, in the state the attempt
// leaves it, so a row needs a key of its own to be inserted at most once: its event, its
// destination and which of that destination's native events it is (`part`). Rows stored
// before this version keep part NULL (distinct to the unique index). A delivered row keeps
// no item from now on: its request is on its attempt. And the dispatch queue row is written
// by the intake's transaction itself (append-events.ts) instead of a trigger it never names.
export default `
  ALTER TABLE deliveries ADD COLUMN part INTEGER;
  DROP INDEX deliveries_event_seq;
  CREATE UNIQUE INDEX deliveries_event_part ON deliveries(event_seq, destination_id, part);
  DROP TRIGGER events_dispatch;
`;
