// Migration 9: one index on the customer's event id, on events instead of deliveries.
// Lookups by event id (events list, trace, deliveries list and replay) go through
// events(event_id) → seq → deliveries(event_seq). The deliveries index took four random-key
// inserts per event (one per destination) in the delivery thread's hottest transaction,
// and events had none, so event lookups scanned the table.
export default `
  CREATE INDEX events_event_id ON events(event_id) WHERE event_id IS NOT NULL;
  DROP INDEX deliveries_event;
`;
