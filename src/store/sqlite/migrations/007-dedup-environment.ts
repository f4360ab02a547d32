// Migration 7: dedup keys are per environment. A `dev` event claims (account, dev, name,
// event.id) and never the key its production twin needs, so testing with real order ids
// cannot turn the later production event into a duplicate. Existing keys were all claimed
// by events of either environment; they are kept as production keys.
export default `
  CREATE TABLE dedup_keys_v7 (
    script_id     TEXT NOT NULL,
    environment   TEXT NOT NULL CHECK (environment IN ('prod', 'dev')),
    name          TEXT NOT NULL,
    event_id      TEXT NOT NULL,
    first_seen_at INTEGER NOT NULL,
    PRIMARY KEY (script_id, environment, name, event_id)
  ) STRICT, WITHOUT ROWID;
  INSERT INTO dedup_keys_v7 (script_id, environment, name, event_id, first_seen_at)
    SELECT script_id, 'prod', name, event_id, first_seen_at FROM dedup_keys;
  DROP TABLE dedup_keys;
  ALTER TABLE dedup_keys_v7 RENAME TO dedup_keys;
  CREATE INDEX dedup_keys_age ON dedup_keys(first_seen_at);
`;
