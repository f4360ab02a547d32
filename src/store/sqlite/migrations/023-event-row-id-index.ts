// Migration 23: an index on the event row's own id (events.id, tracklane's UUID), which the
// admin API's event view and trace, `events show`, the search box and the deliveries of an
// event (eventRowId) look events up by; without it each of those read the whole table.
// Not UNIQUE: intake gives every row a fresh random UUID, but the schema never enforced it,
// and a store holding a duplicate from elsewhere (an import, a hand-made row) must still open.
export default `
  CREATE INDEX IF NOT EXISTS events_id ON events(id);
`;
