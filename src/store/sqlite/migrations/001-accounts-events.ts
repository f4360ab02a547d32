// Migration 1: accounts, their tokens, received events.
export default `
  CREATE TABLE accounts (
    script_id    TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    tier         TEXT NOT NULL CHECK (tier IN ('BASIC','FLEX','PRO','CUSTOM')),
    addon        INTEGER NOT NULL DEFAULT 0,
    enabled      INTEGER NOT NULL DEFAULT 1,
    host         TEXT,
    country      TEXT,
    tax_rate     REAL,
    extra_events TEXT NOT NULL DEFAULT '[]',
    customer     TEXT,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
  ) STRICT;
  CREATE TABLE access_tokens (
    id          INTEGER PRIMARY KEY,
    script_id   TEXT NOT NULL REFERENCES accounts(script_id),
    hash        TEXT NOT NULL,
    prefix      TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER
  ) STRICT;
  CREATE INDEX access_tokens_script ON access_tokens(script_id);
  CREATE TABLE events (
    seq          INTEGER PRIMARY KEY,
    id           TEXT NOT NULL,
    script_id    TEXT NOT NULL,
    name         TEXT,
    event_id     TEXT,
    status       TEXT NOT NULL,
    source       TEXT NOT NULL,
    request_id   TEXT NOT NULL,
    received_at  INTEGER NOT NULL,
    errors       TEXT NOT NULL,
    warnings     TEXT NOT NULL,
    payload      TEXT NOT NULL
  ) STRICT;
  CREATE INDEX events_account ON events(script_id, seq);
`;
