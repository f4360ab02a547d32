// Migration 2: destinations connected to accounts.
export default `
  CREATE TABLE destinations (
    id          TEXT PRIMARY KEY,
    script_id   TEXT NOT NULL REFERENCES accounts(script_id),
    type        TEXT NOT NULL,
    name        TEXT NOT NULL,
    enabled     INTEGER NOT NULL DEFAULT 1,
    settings    TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    removed_at  INTEGER
  ) STRICT;
  CREATE INDEX destinations_account ON destinations(script_id);
`;
