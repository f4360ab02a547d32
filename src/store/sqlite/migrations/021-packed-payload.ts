// Migration 21: an event's payload deflated against a preset dictionary (payload-codec.ts),
// about a quarter of its JSON text, in a column of its own; the payload column then holds ''.
// Rows stored before keep their text (payload_packed NULL) and read as they did: no rewrite
// of the table, so the migration takes no time however many events a store holds.
export default `
  ALTER TABLE events ADD COLUMN payload_packed BLOB;
`;
