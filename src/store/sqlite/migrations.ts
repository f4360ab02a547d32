// Schema migrations, versioned in code. Each runs once, in order, inside a
// transaction; PRAGMA user_version records how far a database has come.
import type Database from 'better-sqlite3';

export const MIGRATIONS: readonly string[] = [
  // 1: accounts, their tokens, received events
  `
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
  `,
  // 2: destinations connected to accounts
  `
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
  `,
  // 3: product ids seen in product_viewed / product_added_to_cart (the funnel check)
  `
  CREATE TABLE seen_products (
    script_id   TEXT NOT NULL,
    product_id  TEXT NOT NULL,
    PRIMARY KEY (script_id, product_id)
  ) STRICT, WITHOUT ROWID;
  `,
];

/** Brings the database to the latest schema version. */
export function migrate(db: Database.Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]);
      db.pragma(`user_version = ${v + 1}`);
    }).immediate();
  }
}
