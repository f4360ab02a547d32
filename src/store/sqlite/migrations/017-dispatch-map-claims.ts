// Migration 17: how many fan-outs of a queued event started mapping it and never finished
// (the thread or process died, ran out of memory or was ended by the watchdog while the
// event was being mapped). A claim adds one, a finished fan-out leaves the queue or resets
// it; an event claimed again with a count is mapped on its own, and one whose mapping was
// cut short twice is failed (`mapping_failed`) instead of being mapped again
// (src/delivery/poison.ts).
export default `
  ALTER TABLE dispatch_queue ADD COLUMN map_claims INTEGER NOT NULL DEFAULT 0;
`;
