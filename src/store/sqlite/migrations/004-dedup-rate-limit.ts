// Migration 4: dedup keys of (account, event name, event.id), and a per-account intake rate limit.
export default `
  CREATE TABLE dedup_keys (
    script_id     TEXT NOT NULL,
    name          TEXT NOT NULL,
    event_id      TEXT NOT NULL,
    first_seen_at INTEGER NOT NULL,
    PRIMARY KEY (script_id, name, event_id)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX dedup_keys_age ON dedup_keys(first_seen_at);
  ALTER TABLE accounts ADD COLUMN rate_limit INTEGER;
`;
