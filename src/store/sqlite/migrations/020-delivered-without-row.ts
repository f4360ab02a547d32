// Migration 20: a delivery delivered by its first attempt has no row (docs/delivered-without-row.md).
// The attempt lists what it delivered that has none: [event_seq, part] pairs in `delivered`
// (JSON), with their account and seq range. Indexed, only where it lists any, by destination and
// the range's end (the attempts to D that delivered event seq S have last_seq in [S, S + 4096]
// and first_seq <= S: a record checks no other attempt lists its pairs, a fan-out again skips
// them) and by account (its entries in rowid order: account listings, newest first). Rows
// stored before stay; the views merge both.
export default `
  ALTER TABLE delivery_attempts ADD COLUMN script_id TEXT;
  ALTER TABLE delivery_attempts ADD COLUMN delivered TEXT;
  ALTER TABLE delivery_attempts ADD COLUMN first_seq INTEGER;
  ALTER TABLE delivery_attempts ADD COLUMN last_seq INTEGER;
  CREATE INDEX delivery_attempts_delivered_seq ON delivery_attempts(destination_id, last_seq) WHERE delivered IS NOT NULL;
  CREATE INDEX delivery_attempts_delivered_account ON delivery_attempts(script_id) WHERE delivered IS NOT NULL;
`;
