// Migration 8: mapping rules as versioned data. rule_versions holds every published rule
// file (immutable, as published); rule_live says which version serves each (scope,
// destination), scope being 'default' or a script id; rule_changes is the history of
// publishes and rollbacks, and its newest id is the revision instances poll.
export default `
  CREATE TABLE rule_versions (
    version     INTEGER PRIMARY KEY AUTOINCREMENT,
    scope       TEXT NOT NULL,
    destination TEXT NOT NULL,
    document    TEXT NOT NULL,
    author      TEXT NOT NULL,
    message     TEXT NOT NULL,
    created_at  INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX rule_versions_key ON rule_versions(scope, destination, version);
  CREATE TABLE rule_live (
    scope       TEXT NOT NULL,
    destination TEXT NOT NULL,
    version     INTEGER NOT NULL REFERENCES rule_versions(version),
    PRIMARY KEY (scope, destination)
  ) STRICT, WITHOUT ROWID;
  CREATE TABLE rule_changes (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    version     INTEGER NOT NULL REFERENCES rule_versions(version),
    scope       TEXT NOT NULL,
    destination TEXT NOT NULL,
    action      TEXT NOT NULL CHECK (action IN ('publish', 'rollback')),
    author      TEXT NOT NULL,
    message     TEXT NOT NULL,
    at          INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX rule_changes_key ON rule_changes(scope, destination, id);
`;
